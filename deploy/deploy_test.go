package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
)

var (
	pkiOnce sync.Once
	pkiM    *pki.Manifest
	pkiErr  error
)

func defaultTopology(t *testing.T) *topology.Topology {
	t.Helper()
	topo, err := topology.Load(filepath.Join("..", "topologies", "default.yaml"))
	require.NoError(t, err)
	return topo
}

// mintedPKI mints the default topology's PKI once per test binary.
func mintedPKI(t *testing.T) *pki.Manifest {
	t.Helper()
	pkiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deploy-pki-")
		if err != nil {
			pkiErr = err
			return
		}
		topo, err := topology.Load(filepath.Join("..", "topologies", "default.yaml"))
		if err != nil {
			pkiErr = err
			return
		}
		pkiM, pkiErr = pki.Mint(context.Background(), pkitopo.Request(topo, 0, false), filepath.Join(dir, "pki"))
	})
	require.NoError(t, pkiErr)
	return pkiM
}

// newFake returns a Deployer on fake clientsets (one per cluster).
func newFake(t *testing.T, cell matrix.Cell) (*Deployer, map[string]*fake.Clientset) {
	t.Helper()
	topo := defaultTopology(t)
	fakes := map[string]*fake.Clientset{}
	clients := map[string]kubernetes.Interface{}
	for _, c := range topo.Clusters {
		f := fake.NewClientset()
		fakes[c.Name], clients[c.Name] = f, f
	}
	d, err := New(Options{Topology: topo, PKI: mintedPKI(t), Cell: cell, Clients: clients, AuthToken: "t0ken", Timeout: 5 * time.Second})
	require.NoError(t, err)
	return d, fakes
}

func plans(t *testing.T, d *Deployer) map[string]plan {
	t.Helper()
	require.NoError(t, d.resolveToken(context.Background()))
	out := map[string]plan{}
	for _, c := range d.opts.Topology.Clusters {
		p, err := d.plan(c)
		require.NoError(t, err)
		out[c.Name] = p
	}
	return out
}

func TestPKINamesMatchManifests(t *testing.T) {
	require.Equal(t, pki.SecretName(pki.RoleGRPC, pki.ServerGood), manifests.IngressTLSSecret)
	require.Equal(t, pki.SecretName(pki.RoleQUIC, pki.ServerGood), manifests.QUICTLSSecret)
	require.Equal(t, pki.SecretName(pki.RoleClient, pki.ClientGood), manifests.ClientTLSSecret)
	require.Equal(t, pki.TrustBundleConfigMap, manifests.TrustBundleConfigMap)
	require.Equal(t, pki.ConfigMapName(pki.BundleCustom), manifests.CustomTrustConfigMap)
	require.Equal(t, pki.ConfigMapName(pki.BundleUnrelated), manifests.UnrelatedTrustConfigMap)
	require.Equal(t, pki.ConfigMapName(pki.BundleGRPC), manifests.GRPCTrustConfigMap)
	require.Equal(t, pki.ConfigMapName(pki.BundleQUIC), manifests.QUICTrustConfigMap)
	require.Equal(t, pki.TrustBundleKey, manifests.BundleKey)
}

// Every Secret and ConfigMap a pod mounts is in the plan of its cluster.
func TestEveryMountedObjectIsApplied(t *testing.T) {
	d, _ := newFake(t, matrix.Cell{Workload: matrix.Mixed, Trust: matrix.GRPCOverride})
	d.opts.ClientTLS = true
	for name, p := range plans(t, d) {
		have := map[string]bool{}
		for _, o := range p.objects {
			switch o.(type) {
			case *corev1.Secret, *corev1.ConfigMap:
				have[kindOf(o)+"/"+o.GetName()] = true
			}
		}
		for _, o := range p.objects {
			var spec *corev1.PodSpec
			switch w := o.(type) {
			case *appsv1.Deployment:
				spec = &w.Spec.Template.Spec
			case *appsv1.StatefulSet:
				spec = &w.Spec.Template.Spec
			default:
				continue
			}
			for _, v := range spec.Volumes {
				switch {
				case v.Secret != nil:
					require.True(t, have["Secret/"+v.Secret.SecretName], "%s: %s mounts missing Secret %s", name, o.GetName(), v.Secret.SecretName)
				case v.ConfigMap != nil:
					require.True(t, have["ConfigMap/"+v.ConfigMap.Name], "%s: %s mounts missing ConfigMap %s", name, o.GetName(), v.ConfigMap.Name)
				}
			}
		}
	}
}

func TestPlanFollowsTheCell(t *testing.T) {
	d, _ := newFake(t, matrix.Cell{Workload: matrix.Mixed, Trust: matrix.System})
	ps := plans(t, d)
	a, b, w := ps["region-a"], ps["region-b"], ps["workers"]
	require.Equal(t, matrix.KindStatefulSet, a.values.Stargate.Kind)
	require.Equal(t, matrix.KindDeployment, b.values.Stargate.Kind)
	require.Equal(t, []string{"https://stargate.region-b.nvcf.test:50071"}, a.values.Stargate.RemoteWatchURLs)
	require.Empty(t, b.values.Stargate.RemoteWatchURLs)
	require.Equal(t, "https://stargate.region-a.nvcf.test:50071", a.values.Stargate.GRPCPylonDialAddr)
	require.Equal(t, "quic.region-b.nvcf.test:50072", b.values.Stargate.QUICPylonDialAddr)
	require.Equal(t, "{pod_name}.sg.region-b.nvcf.test", b.values.Stargate.IdentityTemplate)
	require.Len(t, w.values.Worker.Pylons, 1)
	base := w.values.Worker.Pylons[0]
	require.Equal(t, "https://stargate.region-a.nvcf.test:50071", base.BootstrapURL)
	require.Equal(t, matrix.System, base.Trust)
	for _, p := range ps {
		for _, o := range p.objects {
			if s, ok := o.(*corev1.Secret); ok && s.Name == manifests.AuthSecret {
				require.Equal(t, "t0ken", string(s.Data[manifests.AuthTokenKey]))
			}
		}
	}
}

func TestDiscoveryAxisReachesStargate(t *testing.T) {
	d, _ := newFake(t, matrix.Cell{Workload: matrix.Deployment, Trust: matrix.Bundle, Discovery: matrix.DNS})
	p := plans(t, d)["region-b"]
	require.Equal(t, matrix.DNS, p.values.Stargate.Discovery)
	for _, o := range p.objects {
		if dep, ok := o.(*appsv1.Deployment); ok && dep.Name == manifests.StargateName {
			require.Contains(t, dep.Spec.Template.Spec.Containers[0].Args, "--discovery=dns")
			return
		}
	}
	t.Fatal("no stargate Deployment in region-b's plan")
}

func TestBootstrapCluster(t *testing.T) {
	topo, err := topology.Parse([]byte("name: x\nclusters:\n- {name: a, role: stargate}\n- {name: b, role: stargate, stargate: {remoteWatch: [a]}}\n- {name: w, role: workers}\n"))
	require.NoError(t, err)
	b, err := BootstrapCluster(topo)
	require.NoError(t, err)
	require.Equal(t, "b", b)
	topo, err = topology.Parse([]byte("name: x\nclusters:\n- {name: w, role: workers}\n"))
	require.NoError(t, err)
	_, err = BootstrapCluster(topo)
	require.ErrorContains(t, err, "no stargate cluster")
}

func TestOptionsAreChecked(t *testing.T) {
	topo := defaultTopology(t)
	_, err := New(Options{PKI: &pki.Manifest{}})
	require.ErrorContains(t, err, "Topology is nil")
	_, err = New(Options{Topology: topo})
	require.ErrorContains(t, err, "PKI is nil")
	_, err = New(Options{Topology: topo, PKI: &pki.Manifest{}, Cell: matrix.Cell{Workload: "x", Trust: matrix.System}})
	require.ErrorContains(t, err, `workload "x" unknown`)
	_, err = New(Options{Topology: topo, PKI: &pki.Manifest{}, Cell: matrix.Cell{Workload: matrix.Mixed, Trust: matrix.System}})
	require.ErrorContains(t, err, "set Options.Kubeconfig")
}

// Applying twice changes nothing; switching the workload kind replaces the
// Stargate StatefulSet with a Deployment and leaves the rest alone;
// switching trust changes only Pylon.
func TestApplyObjectsIdempotentAndSwitches(t *testing.T) {
	ctx := context.Background()
	d, fakes := newFake(t, matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.Bundle})
	a := fakes["region-a"]
	w := fakes["workers"]
	applyAll := func() {
		for name, p := range plans(t, d) {
			require.NoError(t, d.applyObjects(ctx, fakes[name], p))
		}
	}
	applyAll()
	ss, err := a.AppsV1().StatefulSets("nvcf").Get(ctx, "stargate", metav1.GetOptions{})
	require.NoError(t, err)
	router, err := a.AppsV1().Deployments("nvcf").Get(ctx, "router", metav1.GetOptions{})
	require.NoError(t, err)
	pylon, err := w.AppsV1().Deployments("nvcf").Get(ctx, "pylon", metav1.GetOptions{})
	require.NoError(t, err)
	svc, err := a.CoreV1().Services("nvcf").Get(ctx, manifests.GRPCService, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "stargate.region-a.nvcf.test", svc.Annotations[clusters.ExternalHostnamesAnnotation])
	_, err = a.CoreV1().Secrets("nvcf").Get(ctx, manifests.IngressTLSSecret, metav1.GetOptions{})
	require.NoError(t, err)

	applyAll()
	ss2, err := a.AppsV1().StatefulSets("nvcf").Get(ctx, "stargate", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, ss.Spec, ss2.Spec, "a second apply must not change the StatefulSet")
	require.Equal(t, ss.Labels, ss2.Labels)

	// Trust switch: only Pylon's env changes.
	d.opts.Cell.Trust = matrix.GRPCOverride
	applyAll()
	pylon2, err := w.AppsV1().Deployments("nvcf").Get(ctx, "pylon", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEqual(t, pylon.Spec.Template, pylon2.Spec.Template)
	require.Contains(t, envNames(pylon2.Spec.Template.Spec.Containers[0]), manifests.EnvGRPCCAPath)
	ss3, err := a.AppsV1().StatefulSets("nvcf").Get(ctx, "stargate", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, ss.Spec, ss3.Spec)

	// Workload switch: the StatefulSet goes, a Deployment comes, the router stays.
	d.opts.Cell.Workload = matrix.Deployment
	applyAll()
	_, err = a.AppsV1().StatefulSets("nvcf").Get(ctx, "stargate", metav1.GetOptions{})
	require.Error(t, err)
	dep, err := a.AppsV1().Deployments("nvcf").Get(ctx, "stargate", metav1.GetOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 3, *dep.Spec.Replicas)
	router2, err := a.AppsV1().Deployments("nvcf").Get(ctx, "router", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, router.Spec, router2.Spec)
}

func envNames(c corev1.Container) string {
	var n []string
	for _, e := range c.Env {
		n = append(n, e.Name)
	}
	return strings.Join(n, ",")
}
