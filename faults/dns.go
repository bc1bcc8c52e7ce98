package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults/internal/dnsproxy"
	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/nft"
)

// DNSMode is how a DNS fault answers the faulted name.
type DNSMode = dnsproxy.Mode

// The DNS fault modes.
const (
	// nxDomain answers that the name does not exist.
	nxDomain DNSMode = dnsproxy.NXDomain
	// servFail answers that the server failed.
	servFail DNSMode = dnsproxy.ServFail
	// Spoof answers A queries with DNSFault.Addr.
	Spoof DNSMode = dnsproxy.Spoof
)

// DNSIntercept names the queries a DNS fault catches: those sent to Server
// (UDP and TCP), from the pod range From, or from the host itself when From
// is the zero prefix (CoreDNS forwarding to the external DNS, and the
// harness's probes).
type DNSIntercept struct {
	Server netip.AddrPort `json:"server"`
	From   netip.Prefix   `json:"from,omitzero"`
}

// ClusterDNSIntercept catches cluster c's pods' queries to their cluster
// DNS (CoreDNS), which would otherwise answer from its cache; where those
// never cross the host, CoreDNS's own queries to the provider's lookup
// seam (clusters.Network.LookupSeam), which it does not cache.
func ClusterDNSIntercept(c clusters.ClusterInfo) DNSIntercept {
	if c.Network.LookupSeam.IsValid() {
		return DNSIntercept{Server: c.Network.LookupSeam, From: c.Network.Pods}
	}
	return DNSIntercept{Server: c.Network.DNS, From: c.Network.Pods}
}

// externalDNSIntercept catches the host's queries to the environment's
// external DNS: CoreDNS forwarding the topology's domain, and the
// harness's probes.
func externalDNSIntercept(env *clusters.Environment) DNSIntercept {
	return DNSIntercept{Server: env.DNS}
}

// DNSFault answers one external name wrongly (NXDOMAIN, SERVFAIL or a
// spoofed address) without touching the provider's DNS: nftables DNAT
// sends the intercepted queries to a small DNS server of this process,
// which answers the faulted name and forwards every other query to the
// server it was meant for.
type DNSFault struct {
	// Name is the faulted name, e.g. "stargate.region-a.nvcf.test".
	Name string
	Mode DNSMode
	// Addr is the spoofed IPv4 address (Mode Spoof).
	Addr netip.Addr
	// Intercepts are the queries caught, at least one:
	// DNSIntercept{Server: env.DNS} for the host's queries to the
	// environment's external DNS, ClusterDNSIntercept for a cluster's pods.
	Intercepts []DNSIntercept
	// netns is where the rules and servers live ("" = this process's).
	netns string
}

// Kind is kindDNS.
func (DNSFault) Kind() Kind { return kindDNS }

// Describe names the name, the answer and the intercepts.
func (d DNSFault) Describe() string {
	s := fmt.Sprintf("%s -> %s", d.Name, d.Mode)
	if d.Mode == Spoof {
		s += " " + d.Addr.String()
	}
	for _, in := range d.Intercepts {
		from := "host"
		if in.From.IsValid() {
			from = in.From.String()
		}
		s += fmt.Sprintf(" [%s→%s]", from, in.Server)
	}
	return s
}

func (d DNSFault) inject(ctx context.Context, e *env) (undoFunc, error) {
	if len(d.Intercepts) == 0 {
		return nil, fmt.Errorf("dns fault %s: no Intercepts (the external DNS, ClusterDNSIntercept)", d.Name)
	}
	for _, in := range d.Intercepts {
		if !in.Server.IsValid() {
			return nil, fmt.Errorf("dns fault %s: an intercept without a Server (does the provider give its DNS addresses?)", d.Name)
		}
	}
	if err := nft.Available(); err != nil {
		return nil, err
	}
	if err := e.persist(journal.Cleanup{NFT: &journal.NFT{Netns: d.netns, Comment: e.comment()}}); err != nil {
		return nil, err
	}
	var undos []undoFunc
	fail := func(err error) (undoFunc, error) { return nil, errors.Join(err, chain(undos...)(ctx)) }
	var rules []nft.Rule
	for _, in := range d.Intercepts {
		srv, udpAt, tcpAt, err := d.serve(in, e)
		if err != nil {
			return fail(err)
		}
		undos = append(undos, func(context.Context) error {
			e.note("%s: %d answered %s, %d forwarded", in.Server, srv.Faulted(), d.Mode, srv.Forwarded())
			return srv.Close()
		})
		for _, x := range []struct {
			proto string
			to    netip.AddrPort
		}{{"udp", udpAt}, {"tcp", tcpAt}} {
			match := fmt.Sprintf("meta mark != 0x%x ip daddr %s %s dport %d", netnsx.Mark, in.Server.Addr(), x.proto, in.Server.Port())
			chainName := nft.OutputNAT
			if in.From.IsValid() {
				match = fmt.Sprintf("ip saddr %s ip daddr %s %s dport %d", in.From, in.Server.Addr(), x.proto, in.Server.Port())
				chainName = nft.Prerouting
			}
			rules = append(rules, nft.Rule{Chain: chainName, Expr: fmt.Sprintf("%s dnat ip to %s", match, x.to)})
		}
	}
	if err := nft.Add(ctx, d.netns, e.comment(), rules); err != nil {
		return fail(err)
	}
	flush := func() {
		for _, in := range d.Intercepts {
			if _, err := nft.FlushFlows(d.netns, unix.IPPROTO_UDP, in.From, in.Server); err != nil {
				e.log.Warn("flush DNS conntrack", "err", err)
			}
		}
	}
	flush()
	undos = append(undos, func(ctx context.Context) error {
		err := nft.Delete(ctx, d.netns, e.comment())
		flush()
		return err
	})
	return chain(undos...), nil
}

// serve starts one fault server beside in.Server (same address, free ports).
func (d DNSFault) serve(in DNSIntercept, e *env) (*dnsproxy.Server, netip.AddrPort, netip.AddrPort, error) {
	at := netip.AddrPortFrom(in.Server.Addr(), 0).String()
	pc, err := netnsx.ListenPacket(d.netns, "udp", at, false)
	if err != nil {
		return nil, netip.AddrPort{}, netip.AddrPort{}, fmt.Errorf("listen for the DNS fault on %s: %w", at, err)
	}
	l, err := netnsx.Listen(d.netns, "tcp", at)
	if err != nil {
		_ = pc.Close()
		return nil, netip.AddrPort{}, netip.AddrPort{}, fmt.Errorf("listen for the DNS fault on %s: %w", at, err)
	}
	srv, err := dnsproxy.Start(dnsproxy.Config{
		Name: d.Name, Mode: d.Mode, Addr: d.Addr,
		Upstream: in.Server,
		Dial:     netnsx.Dialer{Netns: d.netns}.DialContext,
		UDP:      pc, TCP: l,
		Logger: e.log,
	})
	if err != nil {
		_ = pc.Close()
		_ = l.Close()
		return nil, netip.AddrPort{}, netip.AddrPort{}, err
	}
	return srv, pc.LocalAddr().(*net.UDPAddr).AddrPort(), l.Addr().(*net.TCPAddr).AddrPort(), nil
}
