package clusters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/topology"
)

func spec() Spec {
	return Spec{Name: "default", Domain: "nvcf.test", Clusters: []ClusterSpec{{Name: "region-a", Nodes: 1}, {Name: "region-b", Nodes: 1}}}
}

func TestValidate(t *testing.T) {
	require.NoError(t, spec().Validate())
	for name, mutate := range map[string]func(*Spec){
		"bad name":     func(s *Spec) { s.Name = "Default" },
		"no domain":    func(s *Spec) { s.Domain = "" },
		"no clusters":  func(s *Spec) { s.Clusters = nil },
		"duplicate":    func(s *Spec) { s.Clusters[1].Name = "region-a" },
		"zero nodes":   func(s *Spec) { s.Clusters[0].Nodes = 0 },
		"cluster name": func(s *Spec) { s.Clusters[0].Name = "a_b" },
	} {
		t.Run(name, func(t *testing.T) {
			s := spec()
			mutate(&s)
			require.ErrorIs(t, s.Validate(), ErrInvalidSpec)
		})
	}
}

func TestHashAndDiff(t *testing.T) {
	a, b := spec(), spec()
	require.Equal(t, a.Hash(), b.Hash())
	require.Empty(t, a.Diff(b))
	b.Clusters[1].Nodes = 2
	b.Clusters = append(b.Clusters, ClusterSpec{Name: "workers", Nodes: 1})
	require.NotEqual(t, a.Hash(), b.Hash())
	require.Equal(t, []string{`cluster "region-b" nodes 1 → 2`, `cluster 2 "workers" added`}, a.Diff(b))
	c := spec()
	c.Clusters[0].Name = "region-z"
	require.Equal(t, []string{`cluster 0 renamed "region-a" → "region-z"`}, a.Diff(c))
}

func TestEnvironmentCluster(t *testing.T) {
	env := &Environment{Clusters: []ClusterInfo{{Name: "a", Context: "a"}}}
	c, ok := env.Cluster("a")
	require.True(t, ok)
	require.Equal(t, "a", c.Context)
	_, ok = env.Cluster("b")
	require.False(t, ok)
}

func TestSpecOfDefaultTopology(t *testing.T) {
	topo, err := topology.Load("../topologies/default.yaml")
	require.NoError(t, err)
	s := SpecOf(topo)
	require.NoError(t, s.Validate())
	require.Equal(t, Spec{Name: "default", Domain: "nvcf.test", Clusters: []ClusterSpec{
		{Name: "region-a", Nodes: 1}, {Name: "region-b", Nodes: 1}, {Name: "workers", Nodes: 1},
	}}, s)
}
