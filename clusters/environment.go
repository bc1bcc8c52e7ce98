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
	// probes outside the clusters resolve through it, and each cluster's DNS
	// forwards the topology's domain to it.
	DNS netip.AddrPort `json:"dns"`
	// ProcessEnv is what a process that acts on the environment without
	// being the provider's (a run's scenario suite) adds to its environment
	// variables so that the provider's down and clean-up find and stop it
	// with the environment, also after its runner was killed: the embedded
	// provider's marker. Empty when the provider needs none.
	ProcessEnv []string `json:"processEnv,omitempty"`
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
	// Network is the cluster's address plan (zero when the provider does
	// not say).
	Network Network `json:"network,omitzero"`
}

// Network is one cluster's address plan, as the provider laid it out: the
// ranges network faults and probes aim at.
type Network struct {
	// Pods is the pod address range.
	Pods netip.Prefix `json:"pods"`
	// Gateway is the host's address on the pods' network: their default
	// route, reachable from every pod of the cluster.
	Gateway netip.Addr `json:"gateway"`
	// Bridge is the host's network interface that holds Gateway.
	Bridge string `json:"bridge,omitempty"`
	// DNS is where the cluster's DNS (CoreDNS) serves the pods.
	DNS netip.AddrPort `json:"dns"`
	// Services is the range of service cluster IPs.
	Services netip.Prefix `json:"services"`
	// LoadBalancers is the range load-balancer addresses come from.
	LoadBalancers netip.Prefix `json:"loadBalancers"`
	// LookupSeam, when set, is the DNS server the cluster's DNS asks for
	// the topology's domain, on a path through this host: where a DNS
	// fault catches the cluster's lookups when the pods' own queries to DNS
	// never cross the host (kind, whose nodes forward them to CoreDNS
	// themselves). Zero: the pods' queries to DNS cross the host.
	LookupSeam netip.AddrPort `json:"lookupSeam,omitzero"`
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
