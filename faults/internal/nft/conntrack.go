package nft

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// FlushFlows deletes the conntrack entries of flows between the prefix
// from and dst (protocol proto: unix.IPPROTO_TCP or IPPROTO_UDP) in netns
// ("" = the caller's), so that packets of flows that exist already meet new
// NAT rules (or leave old ones) instead of following their cached
// translation. Both orientations go: an entry that dst opened (its packet
// towards the pod came first after an earlier flush) would otherwise let
// the pod's packets pass as replies, past any DNAT.
func FlushFlows(netnsName string, proto uint8, from netip.Prefix, dst netip.AddrPort) (uint, error) {
	h, err := handle(netnsName)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	fromPod, err := flowFilter(proto, from, netlink.ConntrackOrigSrcIP, dst, netlink.ConntrackOrigDstIP, netlink.ConntrackOrigDstPort)
	if err != nil {
		return 0, err
	}
	toPod, err := flowFilter(proto, from, netlink.ConntrackOrigDstIP, dst, netlink.ConntrackOrigSrcIP, netlink.ConntrackOrigSrcPort)
	if err != nil {
		return 0, err
	}
	n, err := h.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, fromPod, toPod)
	if err != nil {
		return n, fmt.Errorf("flush conntrack flows %s ↔ %s: %w", from, dst, err)
	}
	return n, nil
}

// flowFilter matches proto flows whose podSide field lies in pods (when
// valid) and whose addrSide and portSide fields are ep (port 0: any).
func flowFilter(proto uint8, pods netip.Prefix, podSide netlink.ConntrackFilterType, ep netip.AddrPort, addrSide, portSide netlink.ConntrackFilterType) (*netlink.ConntrackFilter, error) {
	f := &netlink.ConntrackFilter{}
	if err := f.AddProtocol(proto); err != nil {
		return nil, err
	}
	if pods.IsValid() {
		if err := f.AddIPNet(podSide, &net.IPNet{IP: pods.Addr().AsSlice(), Mask: net.CIDRMask(pods.Bits(), pods.Addr().BitLen())}); err != nil {
			return nil, err
		}
	}
	if err := f.AddIP(addrSide, ep.Addr().AsSlice()); err != nil {
		return nil, err
	}
	if ep.Port() != 0 {
		if err := f.AddPort(portSide, ep.Port()); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func handle(name string) (*netlink.Handle, error) {
	if name == "" {
		return netlink.NewHandle(unix.NETLINK_NETFILTER)
	}
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, fmt.Errorf("open netns %q: %w", name, err)
	}
	defer ns.Close()
	return netlink.NewHandleAt(ns, unix.NETLINK_NETFILTER)
}
