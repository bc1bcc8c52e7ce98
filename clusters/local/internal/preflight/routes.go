package preflight

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"net/netip"
	"os"
	"strings"
)

// Range is an address range the provider will route through interfaces
// it creates.
type Range struct {
	Prefix netip.Prefix
	Owner  string // what uses it, for the message
	// Ours says whether an interface is the provider's own (its routes are
	// no conflict: they belong to an environment Up replaces or reuses).
	Ours func(iface string) bool
}

// Route is one entry of the kernel's IPv4 routing table.
type Route struct {
	Iface  string
	Prefix netip.Prefix
}

// ReadRoutes parses an IPv4 routing table in the format of /proc/net/route.
func ReadRoutes(path string) ([]Route, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Route
	sc := bufio.NewScanner(f)
	sc.Scan() // header: Iface Destination Gateway Flags RefCnt Use Metric Mask ...
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 {
			continue
		}
		dst, err1 := hexAddr(fs[1])
		mask, err2 := hexAddr(fs[7])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		m := mask.As4()
		out = append(out, Route{Iface: fs[0], Prefix: netip.PrefixFrom(dst, bits.OnesCount32(binary.BigEndian.Uint32(m[:])))})
	}
	return out, sc.Err()
}

// hexAddr decodes an address of /proc/net/route (host byte order, which
// is little-endian on every platform the harness runs on).
func hexAddr(s string) (netip.Addr, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return netip.Addr{}, fmt.Errorf("bad address %q", s)
	}
	return netip.AddrFrom4([4]byte{b[3], b[2], b[1], b[0]}), nil
}

// routeProblems reports every range that a route of another interface
// already covers as precisely or more precisely than the provider would:
// such a route would take (part of) the range's traffic away from the
// provider's bridge. Broader routes (the default route, a 198.0.0.0/8
// through a VPN) lose to the provider's more specific ones and are no
// conflict.
func (c *Checks) routeProblems() []Problem {
	if len(c.Ranges) == 0 {
		return nil
	}
	routes, err := ReadRoutes(c.RouteTable)
	if err != nil {
		return []Problem{{What: fmt.Sprintf("cannot read the routing table: %v", err), Fix: "check that /proc is mounted"}}
	}
	var ps []Problem
	for _, r := range c.Ranges {
		for _, rt := range routes {
			if rt.Prefix.Bits() < r.Prefix.Bits() || !r.Prefix.Overlaps(rt.Prefix) || (r.Ours != nil && r.Ours(rt.Iface)) {
				continue
			}
			ps = append(ps, Problem{
				What: fmt.Sprintf("%s (%s) is already routed elsewhere: route %s dev %s", r.Prefix, r.Owner, rt.Prefix, rt.Iface),
				Fix:  fmt.Sprintf("remove that route (`ip route del %s dev %s`) or the interface that brings it; the harness keeps its clusters in 198.18.0.0/15", rt.Prefix, rt.Iface),
			})
		}
	}
	return ps
}
