package extdns

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// start serves s on fresh loopback ports and returns the UDP and TCP
// addresses (127.0.0.88:53 may be taken by a running agent).
func start(t *testing.T, s *Server) (udp, tcp string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, s.serve(ctx, pc, ln))
	t.Cleanup(func() { _ = s.Close() })
	return pc.LocalAddr().String(), ln.Addr().String()
}

func query(t *testing.T, net, server, name string, qtype uint16) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: net, Timeout: 2 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	r, _, err := c.Exchange(m, server)
	require.NoError(t, err)
	return r
}

func aRecords(r *dns.Msg) []string {
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

func TestAnswers(t *testing.T) {
	s := New(nil, "nvcf.test")
	udp, tcp := start(t, s)
	s.Set("Stargate.Region-A.nvcf.test", netip.MustParseAddr("198.19.100.2"), netip.MustParseAddr("198.19.100.3"))

	for _, n := range []struct{ net, addr string }{{"udp", udp}, {"tcp", tcp}} {
		t.Run(n.net, func(t *testing.T) {
			r := query(t, n.net, n.addr, "stargate.region-a.nvcf.test", dns.TypeA)
			require.Equal(t, dns.RcodeSuccess, r.Rcode)
			require.True(t, r.Authoritative)
			require.False(t, r.RecursionAvailable)
			require.Equal(t, []string{"198.19.100.2", "198.19.100.3"}, aRecords(r))

			r = query(t, n.net, n.addr, "stargate.region-a.nvcf.test", dns.TypeAAAA)
			require.Equal(t, dns.RcodeSuccess, r.Rcode, "known name without AAAA is NODATA")
			require.Empty(t, r.Answer)
			require.Len(t, r.Ns, 1)

			r = query(t, n.net, n.addr, "nope.region-a.nvcf.test", dns.TypeA)
			require.Equal(t, dns.RcodeNameError, r.Rcode)
			require.True(t, r.Authoritative)

			r = query(t, n.net, n.addr, "region-a.nvcf.test", dns.TypeA)
			require.Equal(t, dns.RcodeSuccess, r.Rcode, "an empty non-terminal exists")

			r = query(t, n.net, n.addr, "example.com", dns.TypeA)
			require.Equal(t, dns.RcodeRefused, r.Rcode, "never recursion")
			require.Empty(t, r.Answer)

			r = query(t, n.net, n.addr, "nvcf.test", dns.TypeSOA)
			require.Equal(t, dns.RcodeSuccess, r.Rcode)
			require.Len(t, r.Answer, 1)
		})
	}

	s.Remove("stargate.region-a.nvcf.test")
	r := query(t, "udp", udp, "stargate.region-a.nvcf.test", dns.TypeA)
	require.Equal(t, dns.RcodeNameError, r.Rcode)
}

func TestWildcard(t *testing.T) {
	s := New(nil, "nvcf.test")
	udp, _ := start(t, s)
	s.Set("*.sg.region-a.nvcf.test", netip.MustParseAddr("198.19.100.9"))
	r := query(t, "udp", udp, "sg-0.sg.region-a.nvcf.test", dns.TypeA)
	require.Equal(t, []string{"198.19.100.9"}, aRecords(r))
}

func TestFaults(t *testing.T) {
	s := New(nil, "nvcf.test")
	udp, _ := start(t, s)
	const name = "quic.region-b.nvcf.test"
	s.Set(name, netip.MustParseAddr("198.19.101.2"))

	s.SetFault(name, Fault{Kind: NXDomain})
	require.Equal(t, dns.RcodeNameError, query(t, "udp", udp, name, dns.TypeA).Rcode)

	s.SetFault(name, Fault{Kind: ServFail})
	require.Equal(t, dns.RcodeServerFailure, query(t, "udp", udp, name, dns.TypeA).Rcode)

	s.SetFault("*.region-b.nvcf.test", Fault{Kind: Spoof, Addrs: []netip.Addr{netip.MustParseAddr("198.19.100.66")}})
	s.ClearFault(name)
	require.Equal(t, []string{"198.19.100.66"}, aRecords(query(t, "udp", udp, name, dns.TypeA)))
	require.Len(t, s.Faults(), 1)

	s.SetFault(name, Fault{Kind: Drop})
	c := &dns.Client{Net: "udp", Timeout: 300 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(name+".", dns.TypeA)
	_, _, err := c.Exchange(m, udp)
	require.Error(t, err, "a dropped query times out")

	s.ClearFault(name)
	s.ClearFault("*.region-b.nvcf.test")
	require.Equal(t, []string{"198.19.101.2"}, aRecords(query(t, "udp", udp, name, dns.TypeA)))
}

func TestStartReportsBusyAddress(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	s := New(nil, "nvcf.test")
	err = s.Start(context.Background(), netip.MustParseAddrPort(pc.LocalAddr().String()))
	require.ErrorContains(t, err, "listen udp")
}
