package local

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/preflight"
)

// The ports checked are the address plan's (docs/provider-local.md, Requirements).
func TestPreflightPortsFollowThePlan(t *testing.T) {
	got := map[string]string{}
	for _, p := range ports(clusters.Spec{Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 1}, {Name: "b", Nodes: 2}}}) {
		got[p.Network+" "+p.Addr] = p.Owner
	}
	require.Equal(t, map[string]string{
		"tcp 0.0.0.0:6443":    "kube-apiserver of a",
		"tcp 0.0.0.0:6444":    "kube-apiserver of b",
		"tcp 127.0.0.1:12379": "etcd client port of a",
		"tcp 127.0.0.1:12380": "etcd client port of b",
		"tcp 127.0.0.1:12479": "etcd peer port of a",
		"tcp 127.0.0.1:12480": "etcd peer port of b",
		"tcp 0.0.0.0:10250":   "kubelet API of a-node-0",
		"tcp 0.0.0.0:10260":   "kubelet API of b-node-0",
		"tcp 0.0.0.0:10261":   "kubelet API of b-node-1",
		"udp 127.0.0.88:53":   "the harness's external DNS",
		"tcp 127.0.0.88:53":   "the harness's external DNS",
	}, got)
}

// An empty cache asks for MinBuildSpace; whatever else this machine lacks,
// the error is the preflight one.
func TestPreflightErrorIsPreflight(t *testing.T) {
	err := Preflight(Options{StateRoot: t.TempDir(), CacheDir: t.TempDir()}, nil)
	if err != nil {
		require.ErrorIs(t, err, ErrPreflight)
		var pe *preflight.Error
		require.ErrorAs(t, err, &pe)
		for _, pr := range pe.Problems {
			require.NotEmpty(t, pr.Fix, pr.What)
		}
	}
}
