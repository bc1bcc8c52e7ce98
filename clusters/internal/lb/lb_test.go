package lb

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func ptr[T any](v T) *T { return &v }

func TestBackendsFromEndpointSlices(t *testing.T) {
	slice := func(port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: eps,
			Ports: []discoveryv1.EndpointPort{
				{Name: ptr("grpc"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(port)},
				{Name: ptr("quic"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr(port + 1)},
			}}
	}
	ep := func(ip string, ready, terminating *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ready, Terminating: terminating}}
	}
	slices := []*discoveryv1.EndpointSlice{
		slice(50071, ep("198.18.10.5", ptr(true), nil), ep("198.18.10.3", nil, nil), ep("198.18.10.9", ptr(false), nil)),
		slice(50071, ep("198.18.10.4", ptr(true), ptr(true)), ep("198.18.10.3", ptr(true), nil)),
		{AddressType: discoveryv1.AddressTypeIPv6, Endpoints: []discoveryv1.Endpoint{ep("fd00::1", nil, nil)}},
	}
	grpc := backendsFor(corev1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 443}, slices)
	require.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("198.18.10.3:50071"), netip.MustParseAddrPort("198.18.10.5:50071")}, grpc,
		"ready (or unknown) and not terminating, deduplicated, sorted; target port from the slice")
	quic := backendsFor(corev1.ServicePort{Name: "quic", Protocol: corev1.ProtocolUDP, Port: 443}, slices)
	require.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("198.18.10.3:50072"), netip.MustParseAddrPort("198.18.10.5:50072")}, quic)
	require.Empty(t, backendsFor(corev1.ServicePort{Name: "grpc", Protocol: corev1.ProtocolUDP}, slices), "protocol must match")
}

func TestPool(t *testing.T) {
	p := newPool(netip.MustParsePrefix("198.19.100.0/30"))
	a, err := p.allocate("ns/a", netip.Addr{})
	require.NoError(t, err)
	require.Equal(t, "198.19.100.1", a.String())
	again, _ := p.allocate("ns/a", netip.Addr{})
	require.Equal(t, a, again)
	b, err := p.allocate("ns/b", netip.MustParseAddr("198.19.100.1"))
	require.NoError(t, err)
	require.Equal(t, "198.19.100.2", b.String(), "a preferred address that is taken is not reused")
	_, err = p.allocate("ns/c", netip.Addr{})
	require.ErrorContains(t, err, "exhausted")
	p.release("ns/a")
	c, err := p.allocate("ns/c", netip.MustParseAddr("198.19.100.1"))
	require.NoError(t, err)
	require.Equal(t, "198.19.100.1", c.String(), "the status address is kept after a restart")
}

// tcpEcho answers each line with "<name>:<line>".
func tcpEcho(t *testing.T, name string) netip.AddrPort {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "%s:%s\n", name, sc.Text())
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func TestTCPRoundRobinAndFailover(t *testing.T) {
	f, err := listenTCP(netip.MustParseAddrPort("127.0.0.1:0"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer f.close()
	a, b := tcpEcho(t, "a"), tcpEcho(t, "b")
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := netip.MustParseAddrPort(dead.Addr().String())
	dead.Close()
	f.setBackends([]netip.AddrPort{a, deadAddr, b})

	hit := map[string]int{}
	for i := 0; i < 6; i++ {
		c, err := net.Dial("tcp", f.addr().String())
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "hi\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		hit[line[:1]]++
		c.Close()
	}
	require.Equal(t, map[string]int{"a": 3, "b": 3}, hit, "round-robin, skipping the dead backend")

	f.setBackends(nil)
	c, err := net.Dial("tcp", f.addr().String())
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(c)
	require.NoError(t, err, "no backend: the connection is closed")
	c.Close()
}

// udpEcho answers each datagram with "<name>:<payload>".
func udpEcho(t *testing.T, name string) netip.AddrPort {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(name+":"+string(buf[:n])), from)
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

func TestUDPSessions(t *testing.T) {
	f, err := listenUDP(netip.MustParseAddrPort("127.0.0.1:0"), 300*time.Millisecond, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer f.close()
	f.setBackends([]netip.AddrPort{udpEcho(t, "a"), udpEcho(t, "b")})

	exchange := func(c net.Conn, msg string) string {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Write([]byte(msg))
		require.NoError(t, err)
		buf := make([]byte, 2048)
		n, err := c.Read(buf)
		require.NoError(t, err)
		return string(buf[:n])
	}
	dial := func(from string) net.Conn {
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(from)), net.UDPAddrFromAddrPort(f.addr()))
		require.NoError(t, err)
		return c
	}
	c1 := dial("127.0.0.1:0")
	defer c1.Close()
	c2 := dial("127.0.0.2:0")
	defer c2.Close()

	first := exchange(c1, "1")
	for i := 0; i < 5; i++ {
		require.Equal(t, first[:2]+"x", exchange(c1, "x"), "a client's datagrams stay on one backend")
	}
	second := exchange(c2, "2")
	require.NotEqual(t, first[:1], second[:1], "a new client goes to the next backend")
	require.Equal(t, 2, f.sessionCount())

	rebound := dial("127.0.0.1:0") // same client IP, new port: NAT rebinding
	defer rebound.Close()
	require.Equal(t, first[:2]+"r", exchange(rebound, "r"), "a client IP keeps its backend across ports")
	require.Equal(t, 3, f.sessionCount())

	deadline := time.Now().Add(5 * time.Second)
	for f.sessionCount() > 0 {
		require.True(t, time.Now().Before(deadline), "idle sessions end")
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	require.Contains(t, []string{"a:y", "b:y"}, exchange(c1, "y"), "an expired client starts a new session")
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }
