package podnet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every index below MaxClusters gets ranges of its own, inside the test
// ranges; the next index is the first whose service range would run into
// the load-balancer pools, so MaxClusters is the plan's true room. The
// environments' share leaves the root tests' indexes (85…89) free.
func TestPlanLimits(t *testing.T) {
	for i := range MaxClusters {
		require.True(t, TestRange.Contains(GatewayOf(i)), "cluster %d", i)
		require.True(t, PodPrefix(i).Contains(GatewayOf(i)), "cluster %d", i)
		require.True(t, HarnessRange.Contains(ServicePrefix(i).Addr()), "cluster %d", i)
		require.True(t, HarnessRange.Contains(LBPrefix(i).Addr()), "cluster %d", i)
		for j := range MaxClusters {
			if i == j {
				continue
			}
			require.False(t, PodPrefix(i).Overlaps(PodPrefix(j)), "clusters %d and %d", i, j)
			require.False(t, ServicePrefix(i).Overlaps(ServicePrefix(j)), "clusters %d and %d", i, j)
			require.False(t, LBPrefix(i).Overlaps(LBPrefix(j)), "clusters %d and %d", i, j)
			require.NotEqual(t, BridgeName(i), BridgeName(j))
			require.NotEqual(t, BridgeMAC(i), BridgeMAC(j))
		}
		for j := range MaxClusters {
			require.False(t, ServicePrefix(i).Overlaps(LBPrefix(j)), "cluster %d's services and cluster %d's pool", i, j)
		}
		require.NoError(t, checkIndex(i))
	}
	require.True(t, ServicePrefix(MaxClusters).Overlaps(LBPrefix(0)), "one more index and the service ranges reach the pools")
	require.Error(t, checkIndex(MaxClusters))
	require.Less(t, EnvironmentClusters, 85, "the root tests' networks (nvcfbr85…89) lie above the environments'")
	require.LessOrEqual(t, EnvironmentClusters, MaxClusters)
}
