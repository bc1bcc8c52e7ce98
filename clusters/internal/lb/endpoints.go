package lb

import (
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// backendsFor lists the ready endpoints of one Service port across the
// Service's EndpointSlices: a slice port with the same name and protocol,
// endpoints that are ready (nil counts as ready) and not terminating, their
// first IPv4 address. The result is sorted, so round-robin is stable.
func backendsFor(sp corev1.ServicePort, slices []*discoveryv1.EndpointSlice) []netip.AddrPort {
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	seen := map[netip.AddrPort]bool{}
	var out []netip.AddrPort
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var port int32 = -1
		for _, p := range s.Ports {
			pp := corev1.ProtocolTCP
			if p.Protocol != nil {
				pp = *p.Protocol
			}
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == sp.Name && pp == proto && p.Port != nil {
				port = *p.Port
			}
		}
		if port <= 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
				continue
			}
			if len(e.Addresses) == 0 {
				continue
			}
			a, err := netip.ParseAddr(e.Addresses[0])
			if err != nil {
				continue
			}
			ap := netip.AddrPortFrom(a, uint16(port))
			if !seen[ap] {
				seen[ap] = true
				out = append(out, ap)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Compare(out[j]) < 0 })
	return out
}
