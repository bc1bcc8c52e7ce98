package clusters

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// NodeInternalIP is the node's first IPv4 InternalIP, the address the
// kubelet registered it with, first as the API lists it (a dual-stack node
// lists one per family; every network here is IPv4). Every provider part
// that needs a node's address asks this, so they agree on which one.
func NodeInternalIP(n *corev1.Node) (netip.Addr, bool) {
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}
