package kind

import (
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kind clusters' CoreDNS answers cluster.local, forwards only the
// topology's domain, to the external DNS on the host, uncached (a DNS
// fault there acts at once), and recurses for nothing else.
func TestCorefile(t *testing.T) {
	c := Corefile("nvcf.test")
	require.Contains(t, c, "kubernetes cluster.local in-addr.arpa ip6.arpa")
	domain := block(t, c, "nvcf.test:53")
	require.Contains(t, domain, "forward . 198.19.191.53:53")
	require.NotContains(t, domain, "cache", "the domain's answers are not cached")
	require.Contains(t, block(t, c, ".:53"), "rcode NXDOMAIN")
	require.Equal(t, 1, strings.Count(c, "forward"), "nothing but the domain is forwarded")
	require.NotContains(t, c, "resolv.conf")
	for _, p := range []string{"health", "ready"} {
		require.Contains(t, block(t, c, "cluster.local:53"), p, "kubeadm's probes need %s", p)
	}
}

// block is the body of the Corefile's server block that opens with key.
func block(t *testing.T, corefile, key string) string {
	t.Helper()
	for _, part := range strings.Split(corefile, "\n}\n") {
		if strings.HasPrefix(strings.TrimSpace(part), key) {
			return part
		}
	}
	t.Fatalf("no server block %q in\n%s", key, corefile)
	return ""
}

func node(name, ip, podCIDR string, cp bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}, Spec: corev1.NodeSpec{PodCIDR: podCIDR}}
	if ip != "" {
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}
	}
	if cp {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
	}
	return n
}

// Each node's pods route through the node, the services through the
// control plane; a node outside the nodes' network, or without its pod
// CIDR yet, is an error rather than a wrong route.
func TestHostRoutes(t *testing.T) {
	svc := netip.MustParsePrefix("198.19.224.0/24")
	rs, err := hostRoutes([]corev1.Node{
		node("w", "198.18.224.3", "198.19.193.0/24", false),
		node("cp", "198.18.224.2", "198.19.192.0/24", true),
	}, svc)
	require.NoError(t, err)
	require.Equal(t, []route{
		{To: netip.MustParsePrefix("198.19.193.0/24"), Via: netip.MustParseAddr("198.18.224.3")},
		{To: netip.MustParsePrefix("198.19.192.0/24"), Via: netip.MustParseAddr("198.18.224.2")},
		{To: svc, Via: netip.MustParseAddr("198.18.224.2")},
	}, rs)

	_, err = hostRoutes([]corev1.Node{node("cp", "10.0.0.2", "198.19.192.0/24", true)}, svc)
	require.ErrorContains(t, err, "node cp: no InternalIP in 198.18.224.0/22")
	_, err = hostRoutes([]corev1.Node{node("cp", "198.18.224.2", "", true)}, svc)
	require.ErrorContains(t, err, "node cp: no pod CIDR yet")
	_, err = hostRoutes([]corev1.Node{node("w", "198.18.224.3", "198.19.193.0/24", false)}, svc)
	require.ErrorContains(t, err, "no control-plane node")
}

// stopServe stops the serving process of its own folder only: a recorded
// pid that now belongs to another process (reused) is left running.
func TestStopServeStopsOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	other := exec.Command("sh", "-c", "sleep 60; :", "sh", dir+"-other")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	require.Eventually(t, func() bool { return isServe(other.Process.Pid, dir+"-other") }, 5*time.Second, 10*time.Millisecond)
	require.False(t, isServe(other.Process.Pid, dir))
	require.NoError(t, stopServe(other.Process.Pid, dir))
	require.NoError(t, other.Process.Signal(syscall.Signal(0)), "another folder's process still runs")

	own := exec.Command("sh", "-c", "sleep 60; :", "sh", dir)
	require.NoError(t, own.Start())
	done := make(chan struct{})
	go func() { _ = own.Wait(); close(done) }()
	// Until the child has exec'd, its command line is still this test's.
	require.Eventually(t, func() bool { return isServe(own.Process.Pid, dir) }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, stopServe(own.Process.Pid, dir))
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the folder's own serving process still runs")
	}
	require.NoError(t, stopServe(0, dir), "nothing recorded: nothing to stop")
	require.NoError(t, stopServe(os.Getpid(), dir), "this process is not dir's")
}
