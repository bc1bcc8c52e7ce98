package faults

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

// realDNS answers every A query with 198.18.250.1 on addr (UDP) inside ns.
func realDNS(t *testing.T, ns string, addr netip.AddrPort) {
	t.Helper()
	pc, err := netnsx.ListenPacket(ns, "udp", addr.String(), false)
	require.NoError(t, err)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(198, 18, 250, 1)})
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
}

// lookup asks server from inside ns and returns the rcode and first A.
func lookup(t *testing.T, ns string, server netip.AddrPort, name string) (int, string) {
	t.Helper()
	// An unmarked socket, as a resolver's (netnsx.Dialer marks its sockets
	// as the injector's own, which the rules let through).
	var conn net.Conn
	require.NoError(t, netnsx.Do(ns, func() (err error) {
		conn, err = net.Dial("udp", server.String())
		return err
	}))
	defer conn.Close()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 10 * time.Second}).ExchangeWithConn(m, &dns.Conn{Conn: conn})
	require.NoError(t, err)
	if len(r.Answer) == 0 {
		return r.Rcode, ""
	}
	return r.Rcode, r.Answer[0].(*dns.A).A.String()
}

// labExternalDNS stands for the provider's external DNS, in the lab's host
// namespace.
var labExternalDNS = netip.MustParseAddrPort("127.0.0.88:53")

func TestDNSSpoofForHostAndPods(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	coreDNS := netip.AddrPortFrom(c.Gateway, 53)
	realDNS(t, lab.Host, labExternalDNS)
	realDNS(t, lab.Host, coreDNS)
	const name = "stargate.region-a.nvcf.test"

	f := DNSFault{
		Name: name, Mode: Spoof, Addr: netip.MustParseAddr("198.18.250.66"),
		Intercepts: []DNSIntercept{{Server: labExternalDNS}, {Server: coreDNS, From: c.Pods}},
		netns:      lab.Host,
	}
	rec := NewRecorder("", nil)
	h := startT(context.Background(), t, Fault{Action: f}, rec)
	// Host-originated queries (CoreDNS forwarding, probes) to the external DNS.
	_, a := lookup(t, lab.Host, labExternalDNS, name)
	require.Equal(t, "198.18.250.66", a)
	_, a = lookup(t, lab.Host, labExternalDNS, "quic.region-a.nvcf.test")
	require.Equal(t, "198.18.250.1", a, "other names are forwarded to the real server")
	// Pods asking their CoreDNS.
	_, a = lookup(t, c.PodNetns, coreDNS, name)
	require.Equal(t, "198.18.250.66", a)
	_, a = lookup(t, c.PodNetns, coreDNS, "quic.region-a.nvcf.test")
	require.Equal(t, "198.18.250.1", a)

	require.NoError(t, h.Stop(context.Background()))
	require.Contains(t, rec.list()[0].Effect, "127.0.0.88:53: 1 answered spoof, 1 forwarded")
	_, a = lookup(t, lab.Host, labExternalDNS, name)
	require.Equal(t, "198.18.250.1", a, "undo restores the real answer")
	_, a = lookup(t, c.PodNetns, coreDNS, name)
	require.Equal(t, "198.18.250.1", a)
}

func TestDNSNXDomain(t *testing.T) {
	lab := nstest.New(t, 1)
	realDNS(t, lab.Host, labExternalDNS)
	startT(context.Background(), t, Fault{Action: DNSFault{Name: "stargate.region-b.nvcf.test", Mode: nxDomain, Intercepts: []DNSIntercept{{Server: labExternalDNS}}, netns: lab.Host}}, nil)
	rcode, _ := lookup(t, lab.Host, labExternalDNS, "stargate.region-b.nvcf.test")
	require.Equal(t, dns.RcodeNameError, rcode)
}
