package clusters

import (
	"errors"
	"net/netip"
)

// ErrNotFound is wrapped when an environment asked for by name does not run.
var ErrNotFound = errors.New("environment not found")

// Environment is a running set of clusters, as a provider hands it back.
type Environment struct {
	// Name is the Spec's name.
	Name string `json:"name"`
	// Kubeconfig is the path of a kubeconfig with one context per cluster.
	Kubeconfig string `json:"kubeconfig"`
	// Clusters in Spec order.
	Clusters []ClusterInfo `json:"clusters"`
	// DNS answers the external hostnames of load balancers (A records);
	// probes outside the clusters resolve through it.
	DNS netip.AddrPort `json:"dns"`
}

// ClusterInfo describes one running cluster.
type ClusterInfo struct {
	// Name of the cluster, as in the Spec.
	Name string `json:"name"`
	// Context is the kubeconfig context that reaches it.
	Context string `json:"context"`
	// APIServer is the API server URL.
	APIServer string `json:"apiServer"`
	// Nodes are the names of the cluster's nodes.
	Nodes []string `json:"nodes,omitempty"`
	// LoadBalancers are the Services of type LoadBalancer that have an
	// external address.
	LoadBalancers []LoadBalancer `json:"loadBalancers,omitempty"`
}

// LoadBalancer is a Service of type LoadBalancer with its external address.
type LoadBalancer struct {
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	// Hostnames are the external names the DNS answers with Addr.
	Hostnames []string `json:"hostnames,omitempty"`
	// Addr is the external address.
	Addr netip.Addr `json:"addr"`
	// Ports the load balancer listens on.
	Ports []Port `json:"ports,omitempty"`
}

// Port is one listener of a load balancer.
type Port struct {
	Name string `json:"name,omitempty"`
	// Protocol is "TCP" or "UDP".
	Protocol string `json:"protocol"`
	Port     int32  `json:"port"`
}

// Cluster returns the named cluster.
func (e *Environment) Cluster(name string) (ClusterInfo, bool) {
	for _, c := range e.Clusters {
		if c.Name == name {
			return c, true
		}
	}
	return ClusterInfo{}, false
}
