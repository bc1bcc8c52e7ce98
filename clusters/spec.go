package clusters

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nvcf/conformance/model/topology"
)

// Spec is what a provider brings up: named clusters in a fixed order. The
// harness converts its topology into a Spec; a provider never reads the
// topology itself.
type Spec struct {
	// Name identifies the environment; Up reuses only an environment of the
	// same name.
	Name string `json:"name"`
	// Domain is the parent of every external hostname (e.g. "nvcf.test");
	// the provider's DNS answers names under it.
	Domain string `json:"domain"`
	// Clusters in order; a cluster's position fixes its address ranges.
	Clusters []ClusterSpec `json:"clusters"`
}

// ClusterSpec is one cluster of a Spec.
type ClusterSpec struct {
	// Name is the cluster's name and its kubeconfig context name.
	Name string `json:"name"`
	// Nodes is the number of (virtual) nodes, at least 1.
	Nodes int `json:"nodes"`
	// Context is the kubeconfig context of an existing cluster (the
	// existing provider; default the cluster's name).
	Context string `json:"context,omitempty"`
}

// ErrInvalidSpec is wrapped by Validate's errors.
var ErrInvalidSpec = errors.New("invalid cluster spec")

// Validate checks names and counts.
func (s Spec) Validate() error {
	if !topology.IsDNSLabel(s.Name) {
		return fmt.Errorf("%w: environment name %q must be a DNS label", ErrInvalidSpec, s.Name)
	}
	if s.Domain == "" {
		return fmt.Errorf("%w: domain is empty; give the topology's domain (e.g. nvcf.test)", ErrInvalidSpec)
	}
	if len(s.Clusters) == 0 {
		return fmt.Errorf("%w: no clusters; name at least one", ErrInvalidSpec)
	}
	seen := map[string]bool{}
	for _, c := range s.Clusters {
		if !topology.IsDNSLabel(c.Name) {
			return fmt.Errorf("%w: cluster name %q must be a DNS label", ErrInvalidSpec, c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("%w: cluster %q named twice", ErrInvalidSpec, c.Name)
		}
		seen[c.Name] = true
		if c.Nodes < 1 {
			return fmt.Errorf("%w: cluster %q has %d nodes; want at least 1", ErrInvalidSpec, c.Name, c.Nodes)
		}
	}
	return nil
}

// Hash is a stable digest of the spec, used to tell a reusable environment
// from a changed one.
func (s Spec) Hash() string {
	data, _ := json.Marshal(s) // a struct of strings and ints always marshals
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Diff lists, in words, how want differs from s (the running spec); empty
// when they are the same.
func (s Spec) Diff(want Spec) []string {
	var d []string
	if s.Name != want.Name {
		d = append(d, fmt.Sprintf("name %q → %q", s.Name, want.Name))
	}
	if s.Domain != want.Domain {
		d = append(d, fmt.Sprintf("domain %q → %q", s.Domain, want.Domain))
	}
	n := max(len(s.Clusters), len(want.Clusters))
	for i := range n {
		switch {
		case i >= len(s.Clusters):
			d = append(d, fmt.Sprintf("cluster %d %q added", i, want.Clusters[i].Name))
		case i >= len(want.Clusters):
			d = append(d, fmt.Sprintf("cluster %d %q removed", i, s.Clusters[i].Name))
		case s.Clusters[i].Name != want.Clusters[i].Name:
			d = append(d, fmt.Sprintf("cluster %d renamed %q → %q", i, s.Clusters[i].Name, want.Clusters[i].Name))
		case s.Clusters[i].Nodes != want.Clusters[i].Nodes:
			d = append(d, fmt.Sprintf("cluster %q nodes %d → %d", s.Clusters[i].Name, s.Clusters[i].Nodes, want.Clusters[i].Nodes))
		}
	}
	return d
}

// SpecOf is the one conversion of a topology into the providers' Spec.
func SpecOf(t *topology.Topology) Spec {
	s := Spec{Name: t.Name, Domain: t.Domain}
	for _, c := range t.Clusters {
		s.Clusters = append(s.Clusters, ClusterSpec{Name: c.Name, Nodes: c.Nodes, Context: c.Context})
	}
	return s
}
