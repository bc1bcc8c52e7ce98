// Package topology is the model of a topology file: which clusters exist,
// what each runs, and the external names that everything else (PKI,
// manifests, probes, DNS) derives from it.
package topology

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Role says what a cluster runs.
type Role string

const (
	// RoleStargate clusters run Stargates, the backend router, the TLS
	// ingress and the QUIC relay.
	RoleStargate Role = "stargate"
	// RoleWorkers clusters run Pylon beside the echo inference server.
	RoleWorkers Role = "workers"
)

// Topology is a parsed, validated topology file.
type Topology struct {
	// Name identifies the topology; clusters are reused only for the same name.
	Name string `json:"name"`
	// Domain is the parent of every external name (default "nvcf.test").
	Domain string `json:"domain,omitempty"`
	// Clusters in bring-up order; the order fixes each cluster's address ranges.
	Clusters []Cluster `json:"clusters"`
}

// Cluster is one Kubernetes cluster of the topology.
type Cluster struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Nodes is the number of virtual nodes (default 1).
	Nodes    int       `json:"nodes,omitempty"`
	Stargate *Stargate `json:"stargate,omitempty"`
	// Context is the kubeconfig context that reaches the cluster on the
	// existing provider (default: the cluster's name); other providers
	// ignore it.
	Context string `json:"context,omitempty"`
}

// Stargate configures a stargate-role cluster.
type Stargate struct {
	// Replicas of the Stargate workload (default 3).
	Replicas int `json:"replicas,omitempty"`
	// RemoteWatch names other stargate clusters watched as remote regions.
	RemoteWatch []string `json:"remoteWatch,omitempty"`
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// IsDNSLabel reports whether s is an RFC 1123 DNS label (lower case, at most
// 63 characters), the form of every name the harness turns into a host name,
// a namespace or a Kubernetes object name.
func IsDNSLabel(s string) bool { return dnsLabel.MatchString(s) }

// Load reads and validates a topology file.
func Load(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("topology %s: %w", path, err)
	}
	return t, nil
}

// Parse parses and validates a topology document, filling defaults.
func Parse(data []byte) (*Topology, error) {
	var t Topology
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if t.Domain == "" {
		t.Domain = "nvcf.test"
	}
	for i := range t.Clusters {
		c := &t.Clusters[i]
		if c.Nodes == 0 {
			c.Nodes = 1
		}
		if c.Role == RoleStargate {
			if c.Stargate == nil {
				c.Stargate = &Stargate{}
			}
			if c.Stargate.Replicas == 0 {
				c.Stargate.Replicas = 3
			}
		}
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return &t, nil
}

func (t *Topology) validate() error {
	if !IsDNSLabel(t.Name) {
		return fmt.Errorf("name %q: want a DNS label (lower-case letters, digits, '-')", t.Name)
	}
	for _, l := range strings.Split(t.Domain, ".") {
		if !IsDNSLabel(l) {
			return fmt.Errorf("domain %q: label %q is not a DNS label", t.Domain, l)
		}
	}
	if len(t.Clusters) == 0 {
		return fmt.Errorf("clusters: none given; name at least one")
	}
	if len(t.Clusters) > 80 {
		return fmt.Errorf("clusters: %d given, at most 80 fit the address plan", len(t.Clusters))
	}
	seen := map[string]bool{}
	for _, c := range t.Clusters {
		if !IsDNSLabel(c.Name) {
			return fmt.Errorf("cluster %q: name must be a DNS label", c.Name)
		}
		if seen[c.Name] {
			return fmt.Errorf("cluster %q: named twice", c.Name)
		}
		seen[c.Name] = true
		switch c.Role {
		case RoleStargate, RoleWorkers:
		default:
			return fmt.Errorf("cluster %q: role %q unknown; want %q or %q", c.Name, c.Role, RoleStargate, RoleWorkers)
		}
		if c.Nodes < 1 || c.Nodes > 8 {
			return fmt.Errorf("cluster %q: nodes %d out of range 1..8", c.Name, c.Nodes)
		}
		if c.Role == RoleWorkers && c.Stargate != nil {
			return fmt.Errorf("cluster %q: a workers cluster takes no stargate section", c.Name)
		}
	}
	for _, c := range t.Clusters {
		if c.Stargate == nil {
			continue
		}
		for _, r := range c.Stargate.RemoteWatch {
			rc, ok := t.Cluster(r)
			if !ok || rc.Role != RoleStargate || r == c.Name {
				return fmt.Errorf("cluster %q: remoteWatch %q is not another stargate cluster of this topology", c.Name, r)
			}
		}
	}
	return nil
}

// Cluster returns the named cluster.
func (t *Topology) Cluster(name string) (Cluster, bool) {
	for _, c := range t.Clusters {
		if c.Name == name {
			return c, true
		}
	}
	return Cluster{}, false
}

// Index returns the position of the named cluster, or -1.
func (t *Topology) Index(name string) int {
	for i, c := range t.Clusters {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// ByRole lists the clusters that have role r, in topology order.
func (t *Topology) ByRole(r Role) []Cluster {
	var out []Cluster
	for _, c := range t.Clusters {
		if c.Role == r {
			out = append(out, c)
		}
	}
	return out
}
