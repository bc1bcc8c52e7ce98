package dnsproxy

import (
	"net"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// listenPair listens on one loopback port for UDP and TCP, as a DNS server
// does. The kernel picks a free UDP port, which another process may hold
// for TCP, so it tries a few.
func listenPair(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	var err error
	for range 20 {
		var pc net.PacketConn
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			break
		}
		var l net.Listener
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			return pc, l
		}
		_ = pc.Close()
	}
	require.NoError(t, err, "listen on a loopback port for UDP and TCP")
	return nil, nil
}

// realServer answers every A query with 198.18.250.1, like the external DNS.
func realServer(t *testing.T) netip.AddrPort {
	t.Helper()
	pc, l := listenPair(t)
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(198, 18, 250, 1)})
		_ = w.WriteMsg(m)
	})
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: l, Handler: h}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

func startFault(t *testing.T, cfg Config) string {
	t.Helper()
	pc, l := listenPair(t)
	cfg.UDP, cfg.TCP = pc, l
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return pc.LocalAddr().String()
}

func query(t *testing.T, network, server, name string) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Net: network}).Exchange(m, server)
	require.NoError(t, err)
	return r
}

func TestModes(t *testing.T) {
	up := realServer(t)
	for _, c := range []struct {
		mode  Mode
		rcode int
		addr  string
	}{
		{NXDomain, dns.RcodeNameError, ""},
		{ServFail, dns.RcodeServerFailure, ""},
		{Spoof, dns.RcodeSuccess, "198.18.250.66"},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			cfg := Config{Name: "Stargate.Region-A.nvcf.test", Mode: c.mode, Upstream: up}
			if c.addr != "" {
				cfg.Addr = netip.MustParseAddr(c.addr)
			}
			srv := startFault(t, cfg)
			for _, network := range []string{"udp", "tcp"} {
				r := query(t, network, srv, "stargate.region-a.nvcf.test")
				require.Equal(t, c.rcode, r.Rcode, network)
				if c.addr != "" {
					require.Len(t, r.Answer, 1)
					require.Equal(t, c.addr, r.Answer[0].(*dns.A).A.String())
				}
				// Other names reach the real server.
				r = query(t, network, srv, "quic.region-a.nvcf.test")
				require.Equal(t, dns.RcodeSuccess, r.Rcode)
				require.Equal(t, "198.18.250.1", r.Answer[0].(*dns.A).A.String())
			}
		})
	}
}

func TestBadConfigNamesTheFix(t *testing.T) {
	_, err := Start(Config{Name: "x", Mode: "lie"})
	require.ErrorContains(t, err, "want nxdomain, servfail or spoof")
	_, err = Start(Config{Name: "x", Mode: Spoof})
	require.ErrorContains(t, err, "IPv4")
}
