package manifests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func stargateValues(kind matrix.Kind) Values {
	return Values{
		Cluster: "region-a",
		Stargate: &Stargate{
			Kind:              kind,
			Replicas:          3,
			IdentityTemplate:  "{pod_name}.sg.region-a.nvcf.test",
			GRPCHost:          "stargate.region-a.nvcf.test",
			QUICHost:          "quic.region-a.nvcf.test",
			HTTPHost:          "invoke.region-a.nvcf.test",
			GRPCPylonDialAddr: "https://stargate.region-a.nvcf.test:50071",
			QUICPylonDialAddr: "quic.region-a.nvcf.test:50072",
			RemoteWatchURLs:   []string{"https://stargate.region-b.nvcf.test:50071"},
			AuthSecret:        AuthSecret,
		},
	}
}

func workerValues(trust matrix.Trust) Values {
	return Values{
		Cluster: "workers",
		Worker: &Worker{Pylons: []Pylon{{
			Name:         PylonName,
			BootstrapURL: "https://stargate.region-a.nvcf.test:50071",
			Trust:        trust,
			AuthSecret:   AuthSecret,
		}}},
	}
}

func render(t *testing.T, v Values) []Object {
	t.Helper()
	objs, err := Render(v)
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	for _, o := range objs {
		require.Equal(t, ManagedBy, o.GetLabels()[ManagedByLabel], "%T %s", o, o.GetName())
		if _, isNS := o.(*corev1.Namespace); !isNS {
			require.Equal(t, Namespace, o.GetNamespace(), "%T %s", o, o.GetName())
		}
	}
	return objs
}

func find[T Object](objs []Object, name string) T {
	var zero T
	for _, o := range objs {
		if t, ok := o.(T); ok && o.GetName() == name {
			return t
		}
	}
	return zero
}

func env(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			m[e.Name] = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
			continue
		}
		m[e.Name] = e.Value
	}
	return m
}

func mounts(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, vm := range c.VolumeMounts {
		m[vm.MountPath] = vm.Name
	}
	return m
}

func TestStargateBothKindsFromOneTemplate(t *testing.T) {
	for _, kind := range []matrix.Kind{matrix.KindStatefulSet, matrix.KindDeployment} {
		t.Run(string(kind), func(t *testing.T) {
			objs := render(t, stargateValues(kind))
			var tmpl corev1.PodTemplateSpec
			if kind == matrix.KindStatefulSet {
				ss := find[*appsv1.StatefulSet](objs, StargateName)
				require.NotNil(t, ss)
				require.Nil(t, find[*appsv1.Deployment](objs, StargateName))
				require.Equal(t, HeadlessService, ss.Spec.ServiceName)
				require.EqualValues(t, 3, *ss.Spec.Replicas)
				tmpl = ss.Spec.Template
			} else {
				d := find[*appsv1.Deployment](objs, StargateName)
				require.NotNil(t, d)
				require.Nil(t, find[*appsv1.StatefulSet](objs, StargateName))
				require.EqualValues(t, 3, *d.Spec.Replicas)
				tmpl = d.Spec.Template
				require.Empty(t, tmpl.Spec.Subdomain, "Deployment pods must not get a subdomain")
			}
			c := tmpl.Spec.Containers[0]
			e := env(c)
			require.Equal(t, "fieldRef:metadata.name", e["POD_NAME"])
			require.Equal(t, "fieldRef:metadata.namespace", e["POD_NAMESPACE"])
			require.Equal(t, "fieldRef:status.podIP", e["POD_IP"])
			require.Equal(t, BundlePath, e[EnvSSLCertFile])
			require.Empty(t, e[EnvAuthTokenFile], "the gateway checks tokens, not a file of Stargate's")
			args := strings.Join(c.Args, " ")
			require.Contains(t, args, "--worker-auth-endpoint=http://worker-auth-gateway.nvcf.svc.cluster.local:50051")
			require.Contains(t, args, "--discovery=endpointslice")
			require.Contains(t, args, "--identity-template={pod_name}.sg.region-a.nvcf.test")
			require.Contains(t, args, "--grpc-pylon-dial-addr=https://stargate.region-a.nvcf.test:50071")
			require.Contains(t, args, "--quic-pylon-dial-addr=quic.region-a.nvcf.test:50072")
			require.Contains(t, args, "--remote-stargate-url=https://stargate.region-b.nvcf.test:50071")
			require.Equal(t, "stargate", tmpl.Spec.ServiceAccountName)
		})
	}
}

func TestDNSDiscoveryValue(t *testing.T) {
	v := stargateValues(matrix.KindDeployment)
	v.Stargate.Discovery = matrix.DNS
	d := find[*appsv1.Deployment](render(t, v), StargateName)
	require.Contains(t, d.Spec.Template.Spec.Containers[0].Args, "--discovery=dns")
}

func TestHeadlessServiceAndLoadBalancers(t *testing.T) {
	objs := render(t, stargateValues(matrix.KindStatefulSet))
	h := find[*corev1.Service](objs, HeadlessService)
	require.NotNil(t, h)
	require.Equal(t, corev1.ClusterIPNone, h.Spec.ClusterIP)
	require.False(t, h.Spec.PublishNotReadyAddresses)
	require.Len(t, h.Spec.Ports, 2)
	require.Equal(t, "grpc", h.Spec.Ports[0].Name)
	require.Equal(t, corev1.ProtocolTCP, h.Spec.Ports[0].Protocol)
	require.EqualValues(t, GRPCPort, h.Spec.Ports[0].Port)
	require.Equal(t, "quic", h.Spec.Ports[1].Name)
	require.Equal(t, corev1.ProtocolUDP, h.Spec.Ports[1].Protocol)
	require.EqualValues(t, QUICPort, h.Spec.Ports[1].Port)

	for name, want := range map[string]struct {
		host  string
		port  int32
		proto corev1.Protocol
	}{
		GRPCService: {"stargate.region-a.nvcf.test", GRPCPort, corev1.ProtocolTCP},
		QUICService: {"quic.region-a.nvcf.test", QUICPort, corev1.ProtocolUDP},
		httpService: {"invoke.region-a.nvcf.test", HTTPPort, corev1.ProtocolTCP},
	} {
		s := find[*corev1.Service](objs, name)
		require.NotNil(t, s, name)
		require.Equal(t, corev1.ServiceTypeLoadBalancer, s.Spec.Type, name)
		require.Equal(t, want.host, s.Annotations[clusters.ExternalHostnamesAnnotation], name)
		require.Len(t, s.Spec.Ports, 1, name)
		require.Equal(t, want.port, s.Spec.Ports[0].Port, name)
		require.Equal(t, want.proto, s.Spec.Ports[0].Protocol, name)
	}
}

// Every Service selects the pods of exactly one workload, whose containers
// expose the named target ports with the Service port's protocol; every
// workload's selector matches its own pod template.
func TestSelectorsAndNamedPortsAreConsistent(t *testing.T) {
	cases := []Values{stargateValues(matrix.KindStatefulSet), stargateValues(matrix.KindDeployment), workerValues(matrix.Bundle)}
	for _, v := range cases {
		objs := render(t, v)
		pods := map[string]corev1.PodTemplateSpec{}
		for _, o := range objs {
			switch w := o.(type) {
			case *appsv1.Deployment:
				require.True(t, labels.SelectorFromSet(w.Spec.Selector.MatchLabels).Matches(labels.Set(w.Spec.Template.Labels)), w.Name)
				pods[w.Name] = w.Spec.Template
			case *appsv1.StatefulSet:
				require.True(t, labels.SelectorFromSet(w.Spec.Selector.MatchLabels).Matches(labels.Set(w.Spec.Template.Labels)), w.Name)
				pods[w.Name] = w.Spec.Template
			}
		}
		for _, o := range objs {
			s, ok := o.(*corev1.Service)
			if !ok {
				continue
			}
			var matched []corev1.PodTemplateSpec
			for _, p := range pods {
				if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(p.Labels)) {
					matched = append(matched, p)
				}
			}
			require.Len(t, matched, 1, "service %s must select exactly one workload", s.Name)
			for _, sp := range s.Spec.Ports {
				require.NotEmpty(t, sp.Name, "service %s: ports are named", s.Name)
				found := false
				for _, c := range matched[0].Spec.Containers {
					for _, cp := range c.Ports {
						if cp.Name == sp.TargetPort.String() && cp.Protocol == sp.Protocol {
							found = true
						}
					}
				}
				require.True(t, found, "service %s port %s: no container port %s/%s", s.Name, sp.Name, sp.TargetPort.String(), sp.Protocol)
			}
		}
	}
}

func TestPylonTrustSources(t *testing.T) {
	for trust, want := range map[matrix.Trust]map[string]string{
		matrix.System:       {EnvSSLCertFile: BundlePath},
		matrix.Bundle:       {EnvTLSCertPath: BundlePath},
		matrix.GRPCOverride: {EnvGRPCCAPath: customRootsPath, EnvTLSCertPath: BundlePath},
		// The chain's root only in the system store; the custom bundle holds an unrelated CA.
		matrix.SystemPlusBundle: {EnvSSLCertFile: BundlePath, EnvTLSCertPath: customRootsPath},
	} {
		t.Run(string(trust), func(t *testing.T) {
			d := find[*appsv1.Deployment](render(t, workerValues(trust)), PylonName)
			require.NotNil(t, d)
			require.Len(t, d.Spec.Template.Spec.Containers, 2)
			c := d.Spec.Template.Spec.Containers[0]
			require.Equal(t, "pylon", c.Name)
			e := env(c)
			for _, k := range []string{EnvSSLCertFile, EnvTLSCertPath, EnvGRPCCAPath} {
				require.Equal(t, want[k], e[k], "%s under trust %s", k, trust)
			}
			require.Equal(t, "https://stargate.region-a.nvcf.test:50071", e[EnvBootstrap])
			require.Equal(t, authTokenPath, e[EnvAuthTokenFile])
			m := mounts(c)
			require.Equal(t, "trust", m[TrustDir])
			require.Equal(t, "trust-custom", m[customTrustDir])
			require.Equal(t, "auth", m[authDir])
			vols := map[string]corev1.Volume{}
			for _, v := range d.Spec.Template.Spec.Volumes {
				vols[v.Name] = v
			}
			trustCM, custom := TrustBundleConfigMap, CustomTrustConfigMap
			switch trust {
			case matrix.SystemPlusBundle:
				custom = UnrelatedTrustConfigMap
			case matrix.GRPCOverride:
				trustCM, custom = QUICTrustConfigMap, GRPCTrustConfigMap
			}
			require.Equal(t, trustCM, vols["trust"].ConfigMap.Name)
			require.Equal(t, custom, vols["trust-custom"].ConfigMap.Name)
			require.Equal(t, AuthSecret, vols["auth"].Secret.SecretName)
		})
	}
}

func TestPylonVariantOverrides(t *testing.T) {
	v := workerValues(matrix.Bundle)
	v.Worker.Pylons = append(v.Worker.Pylons, Pylon{
		Name:           "pylon-bad-root",
		Variant:        "bad-root",
		BootstrapURL:   "stargate.region-a.nvcf.test:50071", // scheme-less on purpose
		Trust:          matrix.Bundle,
		TrustConfigMap: "nvcf-wrong-root",
		Env:            map[string]string{EnvTLSCertPath: "", "EXTRA": "1"},
	})
	objs := render(t, v)
	base := find[*appsv1.Deployment](objs, PylonName)
	variant := find[*appsv1.Deployment](objs, "pylon-bad-root")
	require.NotNil(t, base)
	require.NotNil(t, variant)
	require.Equal(t, "bad-root", variant.Labels[VariantLabel])
	require.False(t, labels.SelectorFromSet(base.Spec.Selector.MatchLabels).Matches(labels.Set(variant.Spec.Template.Labels)),
		"the base Pylon's selector must not adopt a variant's pods")
	e := env(variant.Spec.Template.Spec.Containers[0])
	require.NotContains(t, e, EnvTLSCertPath)
	require.Equal(t, "1", e["EXTRA"])
	require.Equal(t, "stargate.region-a.nvcf.test:50071", e[EnvBootstrap])
	require.Equal(t, "nvcf-wrong-root", variant.Spec.Template.Spec.Volumes[0].ConfigMap.Name)
}

func TestNoPlaintextURLInSecureProfile(t *testing.T) {
	for _, v := range []Values{stargateValues(matrix.KindStatefulSet), stargateValues(matrix.KindDeployment), workerValues(matrix.System), workerValues(matrix.Bundle), workerValues(matrix.GRPCOverride)} {
		data, err := RenderYAML(v)
		require.NoError(t, err)
		// The plaintext URLs are Pylon's pod-local inference server and
		// Stargate's in-cluster hop to the worker-auth gateway (h2c, as the
		// router's hops to the pods; NVCF's example endpoint is http:// too).
		rest := strings.ReplaceAll(string(data), "--inference-server-url="+inferenceURL, "")
		rest = strings.ReplaceAll(rest, "--worker-auth-endpoint="+GatewayEndpoint(Namespace), "")
		require.NotContains(t, strings.ToLower(rest), "http://")
		require.Contains(t, string(data), "https://")
	}
}

func TestValuesAreValidated(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Values)
		want   string
	}{
		"http dial in secure": {func(v *Values) { v.Stargate.GRPCPylonDialAddr = "http://stargate.region-a.nvcf.test:50071" }, "http is refused in the secure profile"},
		"scheme-less remote":  {func(v *Values) { v.Stargate.RemoteWatchURLs = []string{"stargate.region-b.nvcf.test:50071"} }, "needs an explicit https:// scheme"},
		"bad kind":            {func(v *Values) { v.Stargate.Kind = "DaemonSet" }, `kind "DaemonSet"`},
		"no template":         {func(v *Values) { v.Stargate.IdentityTemplate = "sg.region-a" }, "must contain {pod_name}"},
		"bad discovery":       {func(v *Values) { v.Stargate.Discovery = "mdns" }, `discovery "mdns"`},
		"no role":             {func(v *Values) { v.Stargate = nil }, "neither Stargate nor Worker"},
		"bad profile":         {func(v *Values) { v.Profile = "lax" }, `profile "lax"`},
	} {
		v := stargateValues(matrix.KindStatefulSet)
		tc.mutate(&v)
		_, err := Render(v)
		require.ErrorContains(t, err, tc.want, name)
	}
	v := workerValues("pinned")
	_, err := Render(v)
	require.ErrorContains(t, err, `trust "pinned"`)

	// http is accepted where written explicitly, in the insecure profile only.
	v = stargateValues(matrix.KindStatefulSet)
	v.Profile = "insecure"
	v.Stargate.RemoteWatchURLs = []string{"http://stargate.region-b.nvcf.test:50071"}
	_, err = Render(v)
	require.NoError(t, err)
}

func TestImagesDefaultAndOverride(t *testing.T) {
	v := stargateValues(matrix.KindDeployment)
	v.Images.Router = "registry.example/stargate-k8s-router:1.2"
	objs := render(t, v)
	require.Equal(t, DefaultImage, find[*appsv1.Deployment](objs, StargateName).Spec.Template.Spec.Containers[0].Image)
	require.Equal(t, "registry.example/stargate-k8s-router:1.2", find[*appsv1.Deployment](objs, routerName).Spec.Template.Spec.Containers[0].Image)
}

func TestDecodeRejectsUnknownFields(t *testing.T) {
	_, err := decode([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIp: None}\n"))
	require.ErrorContains(t, err, "clusterIp")
}

func TestGolden(t *testing.T) {
	for name, v := range map[string]Values{
		"stargate-statefulset.yaml":     stargateValues(matrix.KindStatefulSet),
		"stargate-deployment.yaml":      stargateValues(matrix.KindDeployment),
		"worker-grpc-override.yaml":     workerValues(matrix.GRPCOverride),
		"nvcf-stargate-deployment.yaml": withFlavor(stargateValues(matrix.KindDeployment), FlavorNVCF),
		"nvcf-worker-bundle.yaml":       withFlavor(workerValues(matrix.Bundle), FlavorNVCF),
	} {
		got, err := RenderYAML(v)
		require.NoError(t, err)
		path := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./deploy/manifests -update to create the golden files")
		require.Equal(t, string(want), string(got), "golden %s differs; review and rerun with -update", name)
	}
}

func withFlavor(v Values, f Flavor) Values {
	v.Flavor = f
	return v
}

// intendedEnv are the variables the nvcf flavor sets that a real binary
// reads through clap (nvcfbuild's env lists), with what each does there.
// Any other variable the flavor sets is one a real binary ignores; one a
// real binary reads but this map does not name fails the test, since it
// would change the real component's behaviour unseen.
var intendedEnv = map[string]map[string]string{
	nvcfbuild.Stargate: {
		"POD_NAME":      "--pod-name's variable: the same value as the flag",
		"POD_NAMESPACE": "--pod-namespace's variable: the same value as the flag",
	},
	nvcfbuild.Router: {
		"POD_NAMESPACE": "--target-namespace's variable: the same value as the flag",
	},
	nvcfbuild.Pylon: {
		EnvTLSCertPath: "--tls-cert-path's variable: the reverse tunnel's trust anchor, as the compute plane injects it",
	},
}

// nvcfCases are the values the nvcf flavor renders for b: both workload
// kinds, DNS discovery, every trust source and the mutual-TLS profile,
// each only when b supports what it needs.
func nvcfCases(t *testing.T, b nvcfbuild.Build) []Values {
	dns := stargateValues(matrix.KindStatefulSet)
	dns.Stargate.Discovery = matrix.DNS
	mtlsSG := stargateValues(matrix.KindDeployment)
	mtlsSG.Stargate.ClientCA = true
	mtls := workerValues(matrix.Bundle)
	mtls.Worker.Pylons[0].ClientTLSSecret = ClientTLSSecret
	all := []Values{stargateValues(matrix.KindDeployment), stargateValues(matrix.KindStatefulSet), dns, mtlsSG, mtls}
	for _, tr := range matrix.Trusts {
		all = append(all, workerValues(tr))
	}
	var out []Values
	for _, v := range all {
		v.Flavor, v.Build = FlavorNVCF, &b
		if err := b.Check(v.Features()...); err != nil {
			t.Logf("not rendered for %s: %v", b.Name, err)
			continue
		}
		out = append(out, v)
	}
	require.NotEmpty(t, out)
	return out
}

// nvcfViolations lists what the flavor passes that b does not take, in
// every value set of nvcfCases: an argument of a real component's
// container that is not one of b's flags, or a variable b reads that
// intendedEnv does not name. checked counts the containers looked at.
func nvcfViolations(t *testing.T, b nvcfbuild.Build) (violations []string, checked int) {
	t.Helper()
	for _, v := range nvcfCases(t, b) {
		for _, o := range render(t, v) {
			spec, ok := podSpecOf(o)
			if !ok {
				continue
			}
			for _, c := range spec.Containers {
				role := roleOf(c)
				if !slices.Contains(nvcfbuild.Roles, role) {
					continue // the ingress and the echo server stand in for the user's own
				}
				if _, known := b.Role(role); !known {
					t.Logf("%s: %s knows no %s; its flags are not checked", c.Name, b.Name, nvcfbuild.Binary(role))
					continue
				}
				checked++
				where := v.Cluster + " " + o.GetName() + "/" + c.Name
				for _, a := range c.Args {
					if !strings.HasPrefix(a, "--") {
						violations = append(violations, fmt.Sprintf("%s: argument %q is not a flag (no role argument in the nvcf flavor)", where, a))
						continue
					}
					name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
					if !b.HasFlag(role, name) {
						violations = append(violations, fmt.Sprintf("%s: --%s is not a flag of %s in %s", where, name, nvcfbuild.Binary(role), b.Name))
					}
				}
				for _, e := range c.Env {
					if _, ok := intendedEnv[role][e.Name]; b.ReadsEnv(role, e.Name) && !ok {
						violations = append(violations, fmt.Sprintf("%s: %s is read by %s in %s and set unintended (name it in intendedEnv with what it does)", where, e.Name, nvcfbuild.Binary(role), b.Name))
					}
				}
			}
		}
	}
	return violations, checked
}

// TestNVCFFlavorPassesOnlyNVCFFlags checks the flavor against the
// committed list of the snapshot's flags (fixtures/nvcfbuild).
func TestNVCFFlavorPassesOnlyNVCFFlags(t *testing.T) {
	violations, checked := nvcfViolations(t, nvcfbuild.Snapshot())
	require.Empty(t, violations)
	require.Positive(t, checked)
}

// TestNVCFFlavorPassesOnlyLiveHelpFlags checks the flavor against the
// --help of the real binaries in $NVCF_REAL_BIN_DIR.
func TestNVCFFlavorPassesOnlyLiveHelpFlags(t *testing.T) {
	dir := os.Getenv(nvcfbuild.BinDirEnv)
	if dir == "" {
		t.Skipf("%s is not set: no real binaries whose --help to check the flavor against", nvcfbuild.BinDirEnv)
	}
	b, err := nvcfbuild.FromHelp(context.Background(), dir)
	require.NoError(t, err)
	violations, checked := nvcfViolations(t, b)
	require.Empty(t, violations)
	require.Positive(t, checked)
}

// The check above can fail: a build that lacks a flag or reads a variable
// the flavor sets is caught.
func TestNVCFFlavorCheckCatchesWhatTheBuildLacks(t *testing.T) {
	lacking, err := nvcfbuild.ParseList("a build whose Stargate has only --stargate-id and reads STARGATE_PROFILE",
		"stargate flags --stargate-id\nstargate env STARGATE_PROFILE\nrouter flags --listen-addr\npylon flags --model-name")
	require.NoError(t, err)
	violations, _ := nvcfViolations(t, lacking)
	joined := strings.Join(violations, "\n")
	require.Contains(t, joined, "--metrics-port is not a flag of stargate")
	require.Contains(t, joined, "--target-namespace is not a flag of stargate-k8s-router")
	require.Contains(t, joined, "--stargate-address is not a flag of pylon")
	require.Contains(t, joined, "STARGATE_PROFILE is read by stargate")
}

// Rendering a feature the build lacks fails, naming the flag; a build
// with the flag renders it.
func TestNVCFFlavorRefusesWhatTheBuildLacks(t *testing.T) {
	override := withFlavor(workerValues(matrix.GRPCOverride), FlavorNVCF)
	_, err := RenderYAML(override)
	require.ErrorIs(t, err, nvcfbuild.ErrUnsupported)
	require.ErrorContains(t, err, "pylon has no --grpc-tls-ca-cert-path (STARGATE_GRPC_TLS_CA_CERT_PATH)")
	fixed := nvcfbuild.Snapshot().With(nvcfbuild.Pylon, "grpc-tls-ca-cert-path")
	override.Build = &fixed
	c := find[*appsv1.Deployment](render(t, override), PylonName).Spec.Template.Spec.Containers[0]
	require.Equal(t, customRootsPath, env(c)[EnvGRPCCAPath])

	mtls := withFlavor(workerValues(matrix.Bundle), FlavorNVCF)
	mtls.Worker.Pylons[0].ClientTLSSecret = ClientTLSSecret
	_, err = RenderYAML(mtls)
	require.ErrorIs(t, err, nvcfbuild.ErrUnsupported)
	require.ErrorContains(t, err, "pylon has no --quic-client-cert")
	sg := withFlavor(stargateValues(matrix.KindStatefulSet), FlavorNVCF)
	sg.Stargate.ClientCA = true
	_, err = RenderYAML(sg)
	require.ErrorContains(t, err, "stargate-k8s-router has no --quic-client-ca")
	mutual := nvcfbuild.Snapshot().With(nvcfbuild.Pylon, "quic-client-cert", "quic-client-key").With(nvcfbuild.Router, "quic-client-ca")
	sg.Build = &mutual
	rc := find[*appsv1.Deployment](render(t, sg), routerName).Spec.Template.Spec.Containers[0]
	require.Contains(t, rc.Args, "--quic-client-ca="+customRootsPath)

	// The reference flavor renders everything.
	_, err = RenderYAML(workerValues(matrix.GRPCOverride))
	require.NoError(t, err)
}

func TestNVCFFlavorMountsTheMergedBundleAsTheSystemStore(t *testing.T) {
	// A real Pylon's tunnel trusts only STARGATE_TLS_CERT_PATH: every cell sets it.
	withOverride := nvcfbuild.Snapshot().With(nvcfbuild.Pylon, "grpc-tls-ca-cert-path")
	for trust, want := range map[matrix.Trust]string{matrix.System: systemStorePath, matrix.Bundle: systemStorePath, matrix.GRPCOverride: systemStorePath,
		matrix.SystemPlusBundle: customRootsPath} {
		v := withFlavor(workerValues(trust), FlavorNVCF)
		v.Build = &withOverride
		c := find[*appsv1.Deployment](render(t, v), PylonName).Spec.Template.Spec.Containers[0]
		require.Equal(t, "trust", mounts(c)[systemStoreDir], trust)
		require.Equal(t, want, env(c)[EnvTLSCertPath], trust)
		require.Empty(t, env(c)["SSL_CERT_FILE"], "the store is the mounted file, not a variable")
		require.Equal(t, "auth", mounts(c)[workerTokenDir])
		require.Contains(t, c.Args, "--auth-token-file="+workerTokenPath)
		require.Nil(t, c.ReadinessProbe, "NVCF's worker launch sets no probe on Pylon")
	}
}

func TestUnknownFlavorIsRefused(t *testing.T) {
	_, err := RenderYAML(withFlavor(workerValues(matrix.Bundle), "helm"))
	require.ErrorContains(t, err, `flavor "helm": want reference or nvcf`)
}

func TestMutualTLSProfile(t *testing.T) {
	v := workerValues(matrix.Bundle)
	v.Worker.Pylons[0].ClientTLSSecret = ClientTLSSecret
	c := find[*appsv1.Deployment](render(t, v), PylonName).Spec.Template.Spec.Containers[0]
	require.Contains(t, c.Args, "--quic-client-cert="+clientTLSDir+"/tls.crt")
	require.Contains(t, c.Args, "--quic-client-key="+clientTLSDir+"/tls.key")
	require.Equal(t, "client-tls", mounts(c)[clientTLSDir])

	s := stargateValues(matrix.KindStatefulSet)
	s.Stargate.ClientCA = true
	rc := find[*appsv1.Deployment](render(t, s), routerName).Spec.Template.Spec.Containers[0]
	require.Contains(t, rc.Args, "--quic-client-ca="+customRootsPath)
	require.Contains(t, rc.Args, "--quic-upstream-ca="+customRootsPath)
	require.Equal(t, "trust-custom", mounts(rc)[customTrustDir])
	sc := find[*appsv1.StatefulSet](render(t, s), StargateName).Spec.Template.Spec.Containers[0]
	require.NotContains(t, strings.Join(sc.Args, " "), "client-ca", "behind the relay, Stargate sees the relay, not Pylon's certificate")

	// Off by default.
	c = find[*appsv1.Deployment](render(t, workerValues(matrix.Bundle)), PylonName).Spec.Template.Spec.Containers[0]
	require.NotContains(t, strings.Join(c.Args, " "), "--quic-client-cert")
	rc = find[*appsv1.Deployment](render(t, stargateValues(matrix.KindStatefulSet)), routerName).Spec.Template.Spec.Containers[0]
	require.NotContains(t, strings.Join(rc.Args, " "), "--quic-client-ca")
}

// A Stargate refuses a second registration of an id while the first
// lives, so a Pylon's old pod must go before its new one starts.
func TestPylonRolloutReplacesTheOldPodFirst(t *testing.T) {
	for _, f := range Flavors {
		d := find[*appsv1.Deployment](render(t, withFlavor(workerValues(matrix.Bundle), f)), PylonName)
		ru := d.Spec.Strategy.RollingUpdate
		require.NotNil(t, ru, f)
		require.Zero(t, ru.MaxSurge.IntValue(), f)
		require.Equal(t, 1, ru.MaxUnavailable.IntValue(), f)
	}
}
