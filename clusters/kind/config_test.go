package kind

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/nvcf/conformance/clusters"
)

// Every cluster's ranges sit in the test range, apart from each other and
// from the nodes' network.
func TestPlansAreDisjointAndInTheTestRange(t *testing.T) {
	test := netip.MustParsePrefix("198.18.0.0/15")
	var all []netip.Prefix
	for i := range MaxClusters {
		p := planOf(i)
		all = append(all, p.Pods, p.Services)
	}
	all = append(all, NodeNetwork)
	for i, a := range all {
		require.True(t, test.Contains(a.Addr()) && a.Bits() >= test.Bits(), "%s outside the test range", a)
		for _, b := range all[i+1:] {
			require.False(t, a.Overlaps(b), "%s overlaps %s", a, b)
		}
	}
	require.Equal(t, "198.19.196.0/22", planOf(1).Pods.String())
	require.Equal(t, "198.19.225.0/24", planOf(1).Services.String())
	require.Equal(t, "198.19.225.10", addrAt(planOf(1).Services, 10).String())
}

func TestKindConfig(t *testing.T) {
	spec := clusters.Spec{Name: "e", Domain: "d.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 3}, {Name: "b", Nodes: 5}}}
	cfg, err := kindConfig(spec, 0)
	require.NoError(t, err)
	require.Len(t, cfg.Nodes, 3)
	require.Equal(t, v1alpha4.ControlPlaneRole, cfg.Nodes[0].Role)
	require.Equal(t, v1alpha4.WorkerRole, cfg.Nodes[2].Role)
	require.True(t, cfg.Networking.DisableDefaultCNI)
	require.Equal(t, "198.19.192.0/22", cfg.Networking.PodSubnet)
	require.Contains(t, cfg.KubeadmConfigPatches[0], "imageRepository: nvcf.local")
	require.Contains(t, cfg.KubeadmConfigPatches[1], "failCgroupV1: false")
	require.Contains(t, cfg.KubeadmConfigPatches[1], "syncFrequency: 5s", "a rotated Secret reaches its pods in seconds, not a minute")
	_, err = kindConfig(spec, 1)
	require.ErrorContains(t, err, "at most 4")

	h1, err := configHash(cfg, "img:1")
	require.NoError(t, err)
	h2, err := configHash(cfg, "img:1")
	require.NoError(t, err)
	require.Equal(t, h1, h2)
	h3, err := configHash(cfg, "img:2")
	require.NoError(t, err)
	require.NotEqual(t, h1, h3, "another node image is another cluster")
	cfg.Nodes = cfg.Nodes[:2]
	h4, err := configHash(cfg, "img:1")
	require.NoError(t, err)
	require.NotEqual(t, h1, h4)
}

func TestCNIConfig(t *testing.T) {
	b, err := cniConfig(netip.MustParsePrefix("198.19.192.0/24"))
	require.NoError(t, err)
	var c struct {
		Plugins []map[string]any `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal(b, &c))
	require.Equal(t, "bridge", c.Plugins[0]["type"])
	require.Equal(t, false, c.Plugins[0]["ipMasq"], "pods see each other's own addresses")
	require.Contains(t, string(b), `"subnet": "198.19.192.0/24"`)
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1.5GiB": 3 << 29, "512MiB": 512 << 20, "10kB": 10000, "0B": 0} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := parseBytes("12 parsecs")
	require.Error(t, err)
}

func TestNamesWithoutState(t *testing.T) {
	names, err := Names(Options{StateRoot: t.TempDir() + "/none"})
	require.NoError(t, err)
	require.Empty(t, names)
}
