package local_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// e2eCluster is one cluster of the e2e environment, seen through client-go.
type e2eCluster struct {
	name  string
	index int
	cs    kubernetes.Interface
}

func newCluster(t *testing.T, env *clusters.Environment, name string) *e2eCluster {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: env.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	idx := slices.IndexFunc(env.Clusters, func(c clusters.ClusterInfo) bool { return c.Name == name })
	require.GreaterOrEqual(t, idx, 0)
	return &e2eCluster{name: name, index: idx, cs: cs}
}

func echoPod(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(5)),
			Containers: []corev1.Container{{
				Name: "echo", Image: "nvcf-ref:dev", Args: []string{"echo", "--listen", fmt.Sprintf(":%d", echoPort)},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: echoPort}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

func headless(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: echoPort, TargetPort: intstr.FromString("http")}},
		},
	}
}

// apply creates the namespace, both headless Services, the Deployment and
// StatefulSet (3 replicas each) and a LoadBalancer in front of the Deployment.
func (c *e2eCluster) apply(ctx context.Context, t *testing.T) {
	create := func(err error) {
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	_, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	create(err)
	for _, svc := range []*corev1.Service{headless(stsName), headless(depName)} {
		_, err := c.cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		create(err)
	}
	sel := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	_, err = c.cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: stsName, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), ServiceName: stsName, Selector: sel(stsName),
			PodManagementPolicy: appsv1.ParallelPodManagement, Template: echoPod(stsName)},
	}, metav1.CreateOptions{})
	create(err)
	_, err = c.cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: depName, Namespace: ns},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: sel(depName), Template: echoPod(depName)},
	}, metav1.CreateOptions{})
	create(err)
	_, err = c.cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo-lb", Namespace: ns,
			Annotations: map[string]string{clusters.ExternalHostnamesAnnotation: strings.ReplaceAll(lbHost, "e2e-a", c.name)}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": depName},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: echoPort, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{})
	create(err)
}

// waitPods waits for n Running and Ready pods matching selector.
func (c *e2eCluster) waitPods(ctx context.Context, t *testing.T, selector string, n int) []corev1.Pod {
	var ready []corev1.Pod
	eventually(ctx, t, 3*time.Minute, func() error {
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		ready = ready[:0]
		var states []string
		for _, p := range pods.Items {
			states = append(states, fmt.Sprintf("%s=%s ready=%v", p.Name, p.Status.Phase, podReady(p)))
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
				ready = append(ready, p)
			}
		}
		if len(ready) != n {
			return fmt.Errorf("%s in %s: want %d ready pods, have %v", selector, c.name, n, states)
		}
		return nil
	})
	return ready
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// checkSlices waits for 3 ready endpoints of service svc and checks that
// each has targetRef.name of a pod, and hostname exactly when wantHostname.
func (c *e2eCluster) checkSlices(ctx context.Context, t *testing.T, svc string, wantHostname bool) {
	eventually(ctx, t, time.Minute, func() error {
		slices, err := c.cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return err
		}
		var eps []discoveryv1.Endpoint
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					eps = append(eps, e)
				}
			}
		}
		if len(eps) != 3 {
			return fmt.Errorf("service %s: %d ready endpoints, want 3", svc, len(eps))
		}
		for _, e := range eps {
			if e.TargetRef == nil || !strings.HasPrefix(e.TargetRef.Name, svc+"-") {
				return fmt.Errorf("service %s: endpoint %v has targetRef %v", svc, e.Addresses, e.TargetRef)
			}
			if wantHostname && (e.Hostname == nil || *e.Hostname != e.TargetRef.Name) {
				return fmt.Errorf("service %s: endpoint of %s: hostname %v, want the pod name", svc, e.TargetRef.Name, e.Hostname)
			}
			if !wantHostname && e.Hostname != nil {
				return fmt.Errorf("service %s: endpoint of %s has hostname %q, want none", svc, e.TargetRef.Name, *e.Hostname)
			}
		}
		return nil
	})
}

// checkSRV asks the cluster's CoreDNS for _http._tcp.<svc> SRV and wants 3
// answers whose targets all satisfy ok.
func (c *e2eCluster) checkSRV(ctx context.Context, t *testing.T, svc string, ok func(string) bool) {
	server := net.JoinHostPort(plan.For(c.index, c.name).BridgeIP().String(), "53")
	name := fmt.Sprintf("_http._tcp.%s.%s.svc.cluster.local.", svc, ns)
	eventually(ctx, t, time.Minute, func() error {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeSRV)
		r, _, err := (&dns.Client{Timeout: 2 * time.Second}).ExchangeContext(ctx, m, server)
		if err != nil {
			return fmt.Errorf("SRV %s @%s: %w", name, server, err)
		}
		var targets []string
		for _, rr := range r.Answer {
			if srv, isSRV := rr.(*dns.SRV); isSRV {
				if !ok(srv.Target) || srv.Port != echoPort {
					return fmt.Errorf("SRV %s: unexpected target %s:%d", name, srv.Target, srv.Port)
				}
				targets = append(targets, srv.Target)
			}
		}
		if len(targets) != 3 {
			return fmt.Errorf("SRV %s: %d answers %v (rcode %s), want 3", name, len(targets), targets, dns.RcodeToString[r.Rcode])
		}
		t.Logf("SRV %s → %v", name, targets)
		return nil
	})
}

// replaceStatefulSetPod deletes a pod and waits for a new pod of the same name.
func (c *e2eCluster) replaceStatefulSetPod(ctx context.Context, t *testing.T, name string) {
	old, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, c.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
	eventually(ctx, t, 2*time.Minute, func() error {
		p, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID == old.UID || p.Status.Phase != corev1.PodRunning || !podReady(*p) {
			return fmt.Errorf("pod %s: uid %s (old %s) phase %s ready %v", name, p.UID, old.UID, p.Status.Phase, podReady(*p))
		}
		return nil
	})
}

// replaceDeploymentPod deletes a pod and waits for three ready pods, one of
// them with a name that did not exist before.
func (c *e2eCluster) replaceDeploymentPod(ctx context.Context, t *testing.T, name string) {
	before := map[string]bool{}
	for _, p := range c.waitPods(ctx, t, "app="+depName, 3) {
		before[p.Name] = true
	}
	require.NoError(t, c.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
	eventually(ctx, t, 2*time.Minute, func() error {
		pods := c.waitPods(ctx, t, "app="+depName, 3)
		for _, p := range pods {
			if p.Name == name {
				return fmt.Errorf("deleted pod %s still listed", name)
			}
		}
		for _, p := range pods {
			if !before[p.Name] {
				return nil
			}
		}
		return fmt.Errorf("no new pod yet")
	})
}

// waitLB waits for the LoadBalancer's address.
func (c *e2eCluster) waitLB(ctx context.Context, t *testing.T) netip.Addr {
	var addr netip.Addr
	eventually(ctx, t, time.Minute, func() error {
		s, err := c.cs.CoreV1().Services(ns).Get(ctx, "echo-lb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("echo-lb in %s has no ingress yet", c.name)
		}
		addr, err = netip.ParseAddr(s.Status.LoadBalancer.Ingress[0].IP)
		return err
	})
	return addr
}

// clusterRSS sums the resident memory of the cluster's processes.
func clusterRSS(t *testing.T, env, cluster string) int64 {
	st, err := state.Load(filepath.Join(clusters.StateHome(), env))
	require.NoError(t, err)
	var sum int64
	for _, p := range st.Processes {
		if strings.HasPrefix(p.Name, cluster+"/") {
			sum += rss(p.PID)
		}
	}
	return sum
}

func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ptr[T any](v T) *T { return &v }
