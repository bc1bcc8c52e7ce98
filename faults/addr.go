package faults

import (
	"net/netip"

	"github.com/nvcf/conformance/clusters"
)

// Path is the seam where a path fault sits: traffic from the source pods
// to one load-balancer address:port is redirected (nftables DNAT in table
// `inet nvcf_faults`) to a proxy that this process runs on the source
// cluster's gateway, whose upstream is the real load balancer. The proxy's
// own traffic comes from the host, so the rule does not catch it.
type Path struct {
	// From is the source pod range.
	From netip.Prefix `json:"from"`
	// Gateway is the host address the source pods reach (the bridge's .1);
	// the proxy listens there on a free port.
	Gateway netip.Addr `json:"gateway"`
	// To is the load balancer's address and port.
	To netip.AddrPort `json:"to"`
	// Netns is the network namespace where the rules and proxy live ("" =
	// this process's; tests use namespaces of their own).
	Netns string `json:"netns,omitempty"`
	// KeepFlows leaves existing flows on their cached (unfaulted)
	// translation. By default the fault flushes the path's conntrack entries
	// when it starts and ends, so UDP flows (QUIC) move through the proxy
	// at once; TCP connections opened before the fault then break, and
	// connections through the proxy are closed when it ends.
	KeepFlows bool `json:"keepFlows,omitempty"`
}

// PathBetween is the path from cluster from's pods to a load balancer
// address of another cluster, on the address plan the provider gave
// (from.Network).
func PathBetween(from clusters.ClusterInfo, lb netip.AddrPort) Path {
	return Path{From: from.Network.Pods, Gateway: from.Network.Gateway, To: lb}
}
