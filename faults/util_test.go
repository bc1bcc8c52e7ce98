package faults

import (
	"net"
	"net/netip"
)

func udpAddr(a netip.AddrPort) *net.UDPAddr { return net.UDPAddrFromAddrPort(a) }
