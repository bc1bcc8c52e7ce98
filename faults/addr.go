package faults

import "net/netip"

// ClusterNet is one cluster's address plan on the embedded provider
// (docs/architecture.md): cluster i owns pod range 198.18.(10+i).0/24 with
// its bridge gateway (and CoreDNS) at .1, service range 198.19.(10+i).0/24
// and load-balancer pool 198.19.(100+i).0/24.
type ClusterNet struct {
	Index    int
	Pods     netip.Prefix
	Gateway  netip.Addr
	Services netip.Prefix
	LBs      netip.Prefix
}

// ClusterNetwork returns the address plan of the cluster at topology
// position i (0-based).
func ClusterNetwork(i int) ClusterNet {
	return ClusterNet{
		Index:    i,
		Pods:     netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(10 + i), 0}), 24),
		Gateway:  netip.AddrFrom4([4]byte{198, 18, byte(10 + i), 1}),
		Services: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(10 + i), 0}), 24),
		LBs:      netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(100 + i), 0}), 24),
	}
}

// CoreDNS is where the cluster's CoreDNS listens (the gateway, port 53).
func (c ClusterNet) CoreDNS() netip.AddrPort { return netip.AddrPortFrom(c.Gateway, 53) }

// ExternalDNS is where the provider's external DNS listens.
var ExternalDNS = netip.MustParseAddrPort("127.0.0.88:53")

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
// address of another cluster, on the embedded provider.
func PathBetween(from int, lb netip.AddrPort) Path {
	c := ClusterNetwork(from)
	return Path{From: c.Pods, Gateway: c.Gateway, To: lb}
}
