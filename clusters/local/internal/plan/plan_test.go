package plan

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// The plan as docs/architecture.md writes it down, for cluster 1.
func TestPlanMatchesTheDocs(t *testing.T) {
	c := For(1, "region-b")
	require.Equal(t, "nvcfbr1", c.Bridge())
	require.Equal(t, netip.MustParseAddr("198.18.11.1"), c.BridgeIP())
	require.Equal(t, netip.MustParseAddrPort("198.18.11.1:53"), c.ClusterDNS())
	require.Equal(t, netip.MustParsePrefix("198.18.11.0/24"), c.PodPrefix())
	require.Equal(t, netip.MustParsePrefix("198.19.11.0/24"), c.ServicePrefix())
	require.Equal(t, netip.MustParseAddr("198.19.11.1"), c.KubernetesServiceIP())
	require.Equal(t, netip.MustParsePrefix("198.19.101.0/24"), c.LBPool())
	require.Equal(t, 6444, c.APIServerPort())
	require.Equal(t, "region-b-node-2", c.NodeName(2))
	require.True(t, c.PodPrefix().Contains(c.BridgeIP()))
}

// Everything an environment binds stays distinct across all the indexes
// environments may take (podnet.EnvironmentClusters).
func TestPlanFitsTheEnvironmentLimit(t *testing.T) {
	dns := map[netip.AddrPort]bool{}
	ports := map[int]int{}
	for i := range podnet.EnvironmentClusters {
		a := Env{Base: i}.ExternalDNS()
		require.True(t, a.Addr().IsLoopback(), "base %d", i)
		require.False(t, dns[a], "base %d: %s taken", i, a)
		dns[a] = true
		c := For(i, "c")
		for _, p := range []int{c.APIServerPort(), c.EtcdClientPort(), c.EtcdPeerPort(), c.KubeletPort(0), c.KubeletPort(9)} {
			j, taken := ports[p]
			require.False(t, taken, "port %d of cluster %d is cluster %d's", p, i, j)
			ports[p] = i
		}
	}
}
