package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/hostlock"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/kind/internal/nodeimage"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/internal/syncbuf"
)

// Two kind clusters of two nodes come up from the cached node image: every
// node Ready, CoreDNS answering pods, a pod on each node, pods reaching
// pods on the other node by their own addresses and through a Service
// name; a second Up reuses them; Down leaves no container, network,
// firewall rule or daemon of its own behind.
func TestKindClustersUpAndDown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: the kind provider needs root (Docker)")
	}
	hostlock.Exclusive(t)
	bin := t.TempDir()
	gobuild(t, bin, nil, "github.com/nvcf/conformance/cmd/nvcf-pause", "github.com/nvcf/conformance/cmd/nvcf-runc")
	if _, err := FindNodeImage(ImageOptions{BinDir: bin}); err != nil {
		t.Skipf("skipping: %v (make kind-node-image builds it, once)", err)
	}
	// Kept after a failure: the nodes' logs are in it.
	stateRoot, err := os.MkdirTemp("", "kindtest-state-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(stateRoot)
		} else {
			t.Logf("state and the nodes' logs kept in %s", stateRoot)
		}
	})
	exe, err := os.Executable()
	require.NoError(t, err)
	p := New(Options{StateRoot: stateRoot, BinDir: bin, ServeCommand: []string{exe, serveArg}}).(*provider)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if local.GuardActive(ctx) {
		t.Skip("skipping: an embedded environment is up, and its guard cuts the kind nodes' network off")
	}
	if p.findDocker(ctx) == "" {
		if h := os.Getenv("DOCKER_HOST"); h != "" {
			t.Skipf("skipping: DOCKER_HOST=%s does not answer", h)
		}
		if _, err := exec.LookPath("dockerd"); err != nil {
			t.Skip("skipping: no Docker daemon answers and dockerd is not installed (hack/deps.sh docker)")
		}
		if _, err := os.Stat("/sys/class/net/docker0"); err == nil {
			t.Skip("skipping: a docker0 bridge exists but no daemon answers")
		}
	}
	gobuild(t, bin, []string{"CGO_ENABLED=0"}, "./testdata/podnet")
	archive := filepath.Join(t.TempDir(), "podnet.tar")
	const podnetImage = nodeimage.Repository + "/kindtest-podnet:1"
	require.NoError(t, nodeimage.WriteBinaryImage(archive, podnetImage, filepath.Join(bin, "podnet")))

	before := hostState(t)
	spec := clusters.Spec{Name: "kindtest", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 2}, {Name: "b", Nodes: 2}}}
	downed := false
	t.Cleanup(func() {
		if !downed {
			if err := p.Down(context.Background(), spec.Name); err != nil {
				t.Errorf("down after a failure: %v", err)
			}
		}
	})
	progress := &syncbuf.Buffer{}
	start := time.Now()
	env, err := p.Up(ctx, spec, clusters.WithProgress(progress))
	t.Logf("up:\n%s", progress.String())
	require.NoError(t, err)
	t.Logf("bring-up of %d clusters of 2 nodes: %s", len(spec.Clusters), time.Since(start).Round(time.Second))
	require.Equal(t, ExternalDNS, env.DNS, "the external DNS is the host's")
	st, err := p.load(spec.Name)
	require.NoError(t, err)
	require.True(t, isServe(st.ServePID, p.dir(spec.Name)), "up leaves the load balancers and external DNS served")

	again := &syncbuf.Buffer{}
	_, err = p.Up(ctx, spec, clusters.WithProgress(again))
	require.NoError(t, err)
	for _, c := range spec.Clusters {
		require.Contains(t, again.String(), "reusing kind cluster kindtest-"+c.Name, "a second up reuses the clusters whose hash matches")
	}

	host := p.findDocker(ctx)
	require.NotEmpty(t, host)
	require.NoError(t, p.ImportArchive(ctx, spec.Name, archive))
	podsOf := make([][]*corev1.Pod, len(env.Clusters))
	for i, c := range env.Clusters {
		t.Run(c.Name, func(t *testing.T) {
			cs, err := clusters.Client(env.Kubeconfig, c.Context)
			require.NoError(t, err)
			nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, nl.Items, 2)
			for _, n := range nl.Items {
				require.True(t, nodeReady(n), "node %s Ready", n.Name)
				require.Equal(t, "v1.37.2", n.Status.NodeInfo.KubeletVersion)
			}
			pods := startPodnet(ctx, t, cs, nl.Items, podnetImage)
			podsOf[i] = pods
			a, b := pods[0], pods[1]
			require.NotEqual(t, a.Spec.NodeName, b.Spec.NodeName)
			plan := planOf(i)
			for _, pod := range pods {
				ip := netip.MustParseAddr(pod.Status.PodIP)
				require.True(t, plan.Pods.Contains(ip), "pod %s address %s in the cluster's pod range %s", pod.Name, ip, plan.Pods)
			}

			// Pod to pod across nodes, by address: B sees A's own address.
			var who map[string]string
			get(ctx, t, cs, a, "/fetch", map[string]string{"url": "http://" + at8080(b.Status.PodIP) + "/whoami"}, &who)
			require.Equal(t, b.Name, who["pod"])
			require.Equal(t, a.Status.PodIP, who["caller"], "no masquerading between pods")
			get(ctx, t, cs, b, "/fetch", map[string]string{"url": "http://" + at8080(a.Status.PodIP) + "/whoami"}, &who)
			require.Equal(t, a.Name, who["pod"])
			require.Equal(t, b.Status.PodIP, who["caller"])

			// CoreDNS answers the pods: the API's Service and B's Service,
			// which kube-proxy then forwards to B.
			var addrs []string
			get(ctx, t, cs, a, "/resolve", map[string]string{"name": "kubernetes.default.svc.cluster.local"}, &addrs)
			require.Equal(t, []string{addrAt(plan.Services, 1).String()}, addrs)
			get(ctx, t, cs, a, "/fetch", map[string]string{"url": "http://podnet-" + b.Spec.NodeName + ".podnet.svc.cluster.local:8080/whoami"}, &who)
			require.Equal(t, b.Name, who["pod"])

			var names []string
			for _, n := range nl.Items {
				names = append(names, n.Name)
			}
			mem, err := memory(ctx, host, names)
			require.NoError(t, err)
			t.Logf("cluster %s: %d nodes, %.0f MiB in its node containers (with the test's pods)", c.Name, len(names), float64(mem)/(1<<20))
		})
	}

	t.Run("across clusters", func(t *testing.T) {
		require.NotEmpty(t, podsOf[0])
		require.NotEmpty(t, podsOf[1])
		a, b := podsOf[0][0], podsOf[1][0]
		csA, err := clusters.Client(env.Kubeconfig, env.Clusters[0].Context)
		require.NoError(t, err)
		csB, err := clusters.Client(env.Kubeconfig, env.Clusters[1].Context)
		require.NoError(t, err)

		// A load balancer of cluster a, published under a name of the
		// topology's domain, as the Stargates' are.
		name := "podnet." + env.Clusters[0].Name + "." + spec.Domain
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "podnet-lb", Annotations: map[string]string{clusters.ExternalHostnamesAnnotation: name}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": a.Labels["app"]},
				Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr8080}}},
		}
		_, err = csA.CoreV1().Services(a.Namespace).Create(ctx, svc, metav1.CreateOptions{})
		require.NoError(t, err)
		var lbIP netip.Addr
		require.Eventually(t, func() bool {
			s, err := csA.CoreV1().Services(a.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
			if err != nil || len(s.Status.LoadBalancer.Ingress) == 0 {
				return false
			}
			lbIP, err = netip.ParseAddr(s.Status.LoadBalancer.Ingress[0].IP)
			return err == nil
		}, time.Minute, time.Second, "the load balancer gets an address")
		require.True(t, podnet.LBPrefix(0).Contains(lbIP), "load balancer %s in cluster a's pool %s", lbIP, podnet.LBPrefix(0))

		// The host reaches it (the load balancer forwards to the NodePort,
		// which kube-proxy programs a moment after the address is given).
		var who map[string]string
		hc := http.Client{Timeout: 5 * time.Second}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			resp, err := hc.Get("http://" + netip.AddrPortFrom(lbIP, 8080).String() + "/whoami")
			if !assert.NoError(c, err) {
				return
			}
			defer resp.Body.Close()
			assert.NoError(c, json.NewDecoder(resp.Body).Decode(&who))
		}, 30*time.Second, time.Second, "the host through the load balancer")
		require.Equal(t, a.Name, who["pod"], "the host through the load balancer")

		// A pod of cluster b finds it by name (its CoreDNS forwards the
		// domain to the external DNS) and reaches it across the host.
		var addrs []string
		get(ctx, t, csB, b, "/resolve", map[string]string{"name": name}, &addrs)
		require.Equal(t, []string{lbIP.String()}, addrs)
		get(ctx, t, csB, b, "/fetch", map[string]string{"url": "http://" + name + ":8080/whoami"}, &who)
		require.Equal(t, a.Name, who["pod"], "cluster b's pod through cluster a's load balancer")

		// Names outside cluster.local and the domain are NXDOMAIN: CoreDNS
		// asks no resolver off the machine.
		body, err := csB.CoreV1().Pods(b.Namespace).ProxyGet("http", b.Name, "8080", "/resolve", map[string]string{"name": "example.com"}).DoRaw(ctx)
		require.Error(t, err, "example.com resolved: %s", body)
		require.Contains(t, string(body)+err.Error(), "no such host")
	})

	require.NoError(t, p.Down(ctx, spec.Name))
	downed = true
	if h := p.findDocker(ctx); h != "" {
		out, err := docker(ctx, h, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster", "--format", "{{.Names}}")
		require.NoError(t, err)
		for _, n := range strings.Fields(out) {
			require.False(t, strings.HasPrefix(n, "kindtest-"), "container %s left behind", n)
		}
		_, err = docker(ctx, h, "network", "inspect", NetworkName)
		require.Error(t, err, "the nodes' network is gone")
	}
	require.Equal(t, before, hostState(t), "links, firewall rules and nftables tables as before")
	_, err = os.Stat(filepath.Join(p.o.StateRoot, spec.Name))
	require.ErrorIs(t, err, os.ErrNotExist, "the environment's state is gone")
}

func at8080(ip string) string { return ip + ":8080" }

var intstr8080 = intstr.FromInt32(8080)

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startPodnet runs the podnet pod on every node (the control plane's
// taint tolerated) with a Service each, and returns the pods once Ready.
func startPodnet(ctx context.Context, t *testing.T, cs kubernetes.Interface, nodes []corev1.Node, image string) []*corev1.Pod {
	t.Helper()
	const ns = "podnet"
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, n := range nodes {
		name := "podnet-" + n.Name
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{
				NodeName:    n.Name,
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{
					Name: "podnet", Image: image, ImagePullPolicy: corev1.PullNever,
					Env: []corev1.EnvVar{
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
						{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					},
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/whoami", Port: intstr8080}},
						PeriodSeconds: 1},
				}},
			},
		}
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
				Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr8080}}},
		}
		_, err = cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	var pods []*corev1.Pod
	require.Eventually(t, func() bool {
		pods = pods[:0]
		for _, n := range nodes {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "podnet-"+n.Name, metav1.GetOptions{})
			if err != nil || p.Status.PodIP == "" || !podReady(p) {
				return false
			}
			pods = append(pods, p)
		}
		return true
	}, 3*time.Minute, time.Second, "podnet pods Ready on every node")
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// get asks pod (through the API server's proxy) for path and decodes its
// JSON answer into v.
func get(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, path string, params map[string]string, v any) {
	t.Helper()
	var body []byte
	var err error
	for range 10 { // a fresh Service's rules take a moment to appear
		body, err = cs.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, "8080", path, params).DoRaw(ctx)
		if err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	require.NoError(t, err, "%s %s %v: %s", pod.Name, path, params, body)
	require.NoError(t, json.Unmarshal(body, v), "%s", body)
}

// gobuild builds pkgs into dir as the Makefile does (no version or VCS
// stamps, so that the node image's key matches make's).
func gobuild(t *testing.T, dir string, env []string, pkgs ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build", "-trimpath", "-buildvcs=false", "-o", dir + "/"}, pkgs...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// hostState is what Docker and kind change on the host: links of
// Docker's and the nodes' bridges, the firewall rules naming them or
// Docker's chains, the chains' policies, the nftables tables, the
// harness's addresses on lo, and whether /lib/modules exists.
func hostState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	for _, l := range strings.Split(string(links), "\n") {
		if f := strings.Fields(l); len(f) > 1 && (strings.HasPrefix(f[1], "docker0") || strings.HasPrefix(f[1], "nvcfkind0") || strings.HasPrefix(f[1], "br-")) {
			fmt.Fprintln(&b, "link", f[1])
		}
	}
	for _, table := range []string{"filter", "nat"} {
		rules, _ := exec.Command("iptables", "-w", "-t", table, "-S").Output()
		for _, l := range strings.Split(string(rules), "\n") {
			if strings.HasPrefix(l, "-P") || strings.Contains(l, "DOCKER") || strings.Contains(l, "docker0") || strings.Contains(l, "nvcfkind0") || strings.Contains(l, "198.18.224.") {
				fmt.Fprintln(&b, table, l)
			}
		}
	}
	tables, _ := exec.Command("nft", "list", "tables").Output()
	fmt.Fprintln(&b, string(bytes.TrimSpace(tables)))
	addrs, err := podnet.LoopbackAddrs(context.Background())
	require.NoError(t, err)
	for _, a := range addrs {
		if podnet.HarnessRange.Contains(a) {
			fmt.Fprintln(&b, "lo", a)
		}
	}
	if _, err := os.Stat(modulesDir); err == nil {
		fmt.Fprintln(&b, "dir", modulesDir)
	}
	return b.String()
}
