package nft

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// FlushFlows deletes the conntrack entries of flows from the prefix from
// to dst (protocol proto: unix.IPPROTO_TCP or IPPROTO_UDP) in netns ("" =
// the caller's), so that packets of flows that exist already meet new NAT
// rules (or leave old ones) instead of following their cached translation.
func FlushFlows(netnsName string, proto uint8, from netip.Prefix, dst netip.AddrPort) (uint, error) {
	h, err := handle(netnsName)
	if err != nil {
		return 0, err
	}
	defer h.Close()
	f := &netlink.ConntrackFilter{}
	if err := f.AddProtocol(proto); err != nil {
		return 0, err
	}
	if from.IsValid() {
		if err := f.AddIPNet(netlink.ConntrackOrigSrcIP, &net.IPNet{IP: from.Addr().AsSlice(), Mask: net.CIDRMask(from.Bits(), from.Addr().BitLen())}); err != nil {
			return 0, err
		}
	}
	if err := f.AddIP(netlink.ConntrackOrigDstIP, dst.Addr().AsSlice()); err != nil {
		return 0, err
	}
	if dst.Port() != 0 {
		if err := f.AddPort(netlink.ConntrackOrigDstPort, dst.Port()); err != nil {
			return 0, err
		}
	}
	n, err := h.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, f)
	if err != nil {
		return n, fmt.Errorf("flush conntrack flows %s → %s: %w", from, dst, err)
	}
	return n, nil
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
