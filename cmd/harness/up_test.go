package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/harness/model/topology"
)

func TestSpecOfDefaultTopology(t *testing.T) {
	topo, err := topology.Load("../../topologies/default.yaml")
	require.NoError(t, err)
	spec := SpecOf(topo)
	require.NoError(t, spec.Validate())
	require.Equal(t, clusters.Spec{Name: "default", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{
		{Name: "region-a", Nodes: 1}, {Name: "region-b", Nodes: 1}, {Name: "workers", Nodes: 1},
	}}, spec)
}
