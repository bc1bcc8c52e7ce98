package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadDefault(t *testing.T) {
	topo, err := Load("../../topologies/default.yaml")
	require.NoError(t, err)
	require.Len(t, topo.Clusters, 3)
	require.Equal(t, "stargate.region-a.nvcf.test", topo.GRPCHost("region-a"))
	require.Equal(t, "*.sg.region-b.nvcf.test", topo.IdentityWildcard("region-b"))
	require.Equal(t, "stargate-1.sg.region-a.nvcf.test", topo.Identity("region-a", "stargate-1"))
	a, ok := topo.Cluster("region-a")
	require.True(t, ok)
	require.Equal(t, 3, a.Stargate.Replicas)
	require.Equal(t, []string{"region-b"}, a.Stargate.RemoteWatch)
	require.Len(t, topo.ByRole(RoleWorkers), 1)
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"no clusters":    "name: x\nclusters: []\n",
		"bad name":       "name: X_Y\nclusters: [{name: a, role: workers}]\n",
		"unknown role":   "name: x\nclusters: [{name: a, role: gateway}]\n",
		"duplicate":      "name: x\nclusters: [{name: a, role: workers}, {name: a, role: workers}]\n",
		"unknown field":  "name: x\nclusters: [{name: a, role: workers, color: red}]\n",
		"remote unknown": "name: x\nclusters: [{name: a, role: stargate, stargate: {remoteWatch: [b]}}]\n",
		"remote self":    "name: x\nclusters: [{name: a, role: stargate, stargate: {remoteWatch: [a]}}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc))
			require.Error(t, err)
		})
	}
}
