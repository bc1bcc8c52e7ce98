package corefile

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// block is the body of the Corefile's server block that opens with key.
func block(t testing.TB, corefile, key string) string {
	t.Helper()
	for _, part := range strings.Split(corefile, "\n}\n") {
		if strings.HasPrefix(strings.TrimSpace(part), key+" {") {
			return part
		}
	}
	t.Fatalf("no server block %q in\n%s", key, corefile)
	return ""
}

// Nothing is cached, only the external domain is forwarded, and every other
// name is NXDOMAIN, whichever way a provider hosts CoreDNS.
func TestRenderPolicy(t *testing.T) {
	dns := netip.MustParseAddrPort("127.0.0.88:53")
	for name, c := range map[string]Config{
		"in a pod":      {ClusterDomain: "cluster.local", ExternalDomain: "nvcf.test", ExternalDNS: dns, Probes: true},
		"on the bridge": {ClusterDomain: "cluster.local", ExternalDomain: "nvcf.test", ExternalDNS: dns, Bind: netip.MustParseAddr("198.18.11.1"), Kubeconfig: "/s/kubeconfig", Context: "region-b"},
	} {
		cf := Render(c)
		require.NotContains(t, cf, "cache", "%s: a cache would hold a DNS fault (or a replaced pod) back by its TTL", name)
		ext := block(t, cf, "nvcf.test:53")
		require.Contains(t, ext, "forward . 127.0.0.88:53", name)
		require.Equal(t, 1, strings.Count(cf, "forward"), "%s: nothing but the external domain is forwarded", name)
		require.NotContains(t, cf, "resolv.conf", name)
		require.Contains(t, block(t, cf, ".:53"), "rcode NXDOMAIN", name)
		require.Contains(t, block(t, cf, "cluster.local:53 in-addr.arpa:53 ip6.arpa:53"), "kubernetes cluster.local in-addr.arpa ip6.arpa", name)
		require.NotContains(t, cf, "endpoint_pod_names", "%s: Deployment pods keep upstream's dashed-IP SRV targets", name)
	}
}

func TestRenderHosting(t *testing.T) {
	dns := netip.MustParseAddrPort("127.0.0.88:53")
	pod := Render(Config{ClusterDomain: "cluster.local", ExternalDomain: "nvcf.test", ExternalDNS: dns, Probes: true})
	for _, p := range []string{"health", "ready", "reload"} {
		require.Contains(t, block(t, pod, "cluster.local:53 in-addr.arpa:53 ip6.arpa:53"), p, "kubeadm's Deployment needs %s", p)
	}
	require.NotContains(t, pod, "bind", "in a pod, CoreDNS listens on the pod's addresses")
	require.NotContains(t, pod, "kubeconfig", "in a pod, the service account reaches the API")

	host := Render(Config{ClusterDomain: "cluster.local", ExternalDomain: "nvcf.test", ExternalDNS: dns,
		Bind: netip.MustParseAddr("198.18.11.1"), Kubeconfig: "/s/kubeconfig", Context: "region-b"})
	require.Equal(t, 3, strings.Count(host, "bind 198.18.11.1"), "every server block binds the bridge address only")
	require.Contains(t, host, "kubeconfig /s/kubeconfig region-b")
	for _, p := range []string{"health", "ready", "reload"} {
		require.NotContains(t, host, p)
	}
}
