package faults

import (
	"context"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/nvcf/conformance/faults/internal/nft"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

func TestTCPLatencyOnPathAndUndo(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	lb := netip.AddrPortFrom(c.LB, 7000)
	echo := newTCPEcho(t, lab.Host, lb)
	path := Path{From: c.Pods, Gateway: c.Gateway, To: lb, Netns: lab.Host}

	conn, err := dialFrom(c.PodNetns, lb, 10*time.Second)
	require.NoError(t, err)
	_, err = echoRTT(conn, 10*time.Second)
	require.NoError(t, err)
	_ = conn.Close()
	require.Equal(t, c.Pod, echo.lastPeer(), "before the fault the pod reaches the LB directly")

	rec := NewRecorder(t.TempDir(), nil)
	f := Fault{Name: "slow path", Target: Target{From: "a", To: "a-lb"}, Action: tcpFault{
		Path:       path,
		Upstream:   []toxic{latency{Latency: 100 * time.Millisecond, Jitter: 10 * time.Millisecond}},
		Downstream: []toxic{latency{Latency: 100 * time.Millisecond}},
	}}
	h := startT(context.Background(), t, f, rec)
	conn, err = dialFrom(c.PodNetns, lb, 10*time.Second)
	require.NoError(t, err)
	var fastest time.Duration = time.Hour
	for range 3 {
		rtt, err := echoRTT(conn, 20*time.Second)
		require.NoError(t, err)
		fastest = min(fastest, rtt)
	}
	t.Logf("TCP round trip through 100±10 ms up + 100 ms down: fastest %v", fastest)
	require.GreaterOrEqual(t, fastest, 185*time.Millisecond, "at least 90 ms up + 100 ms down, minus clock slack")
	require.NotEqual(t, c.Pod, echo.lastPeer(), "during the fault the proxy, not the pod, dials the LB")
	require.Len(t, rec.active(), 1)

	require.NoError(t, h.Stop(context.Background()))
	require.Empty(t, rec.active())
	require.Contains(t, rec.list()[0].Effect, "1 connections through the toxics")
	comments, err := nft.Comments(context.Background(), lab.Host)
	require.NoError(t, err)
	require.Empty(t, comments, "undo removes the rules")
	conn, err = dialFrom(c.PodNetns, lb, 10*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	_, err = echoRTT(conn, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, c.Pod, echo.lastPeer(), "after undo the path is direct again (no proxy, no toxics)")
}

func TestUDPFaultCatchesExistingFlowAndUndo(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	lb := netip.AddrPortFrom(c.LB, 7001)
	echo := newUDPEcho(t, lab.Host, lb)
	cl := newUDPClient(t, c, lb)
	require.NoError(t, cl.ping(), "the flow exists before the fault")
	require.Equal(t, 1, echo.count())

	f := Fault{Name: "dup", Action: UDPFault{
		Path:     Path{From: c.Pods, Gateway: c.Gateway, To: lb, Netns: lab.Host},
		Upstream: Impairment{Duplicate: 1},
		Seed:     1,
	}}
	h := startT(context.Background(), t, f, nil)
	// The same socket: its conntrack entry was flushed, so it now goes
	// through the proxy, which sends every datagram twice.
	require.NoError(t, cl.ping())
	require.Eventually(t, func() bool { return echo.count() == 3 }, 10*time.Second, time.Millisecond)

	require.NoError(t, h.Stop(context.Background()))
	require.NoError(t, cl.ping(), "the flow survives the undo")
	require.Eventually(t, func() bool { return echo.count() == 4 }, 10*time.Second, time.Millisecond)
}

func TestUDPBlackholeOnPath(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	lb := netip.AddrPortFrom(c.LB, 7003)
	echo := newUDPEcho(t, lab.Host, lb)
	cl := newUDPClient(t, c, lb)
	h := startT(context.Background(), t, Fault{Action: UDPFault{
		Path:     Path{From: c.Pods, Gateway: c.Gateway, To: lb, Netns: lab.Host},
		Upstream: Impairment{Blackhole: schedule{On: time.Hour}},
	}}, nil)
	for range 20 {
		_, err := cl.WriteTo([]byte("x"), cl.to)
		require.NoError(t, err)
	}
	require.NoError(t, h.Stop(context.Background()))
	_, err := cl.WriteTo([]byte("after"), cl.to)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return echo.count() >= 1 }, 10*time.Second, time.Millisecond)
	require.Equal(t, 1, echo.count(), "nothing crossed the blackhole")
}

// When the load balancer speaks first (a QUIC server's keep-alive or
// response), its packet opens a conntrack entry in its own direction, and
// the pod's datagrams then pass as its replies, past any DNAT. The fault
// must catch such a flow both when it exists before the fault and when
// the load balancer speaks first after the fault's flush.
func TestUDPFaultCatchesFlowWhoseServerSpeaksFirst(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	lb := netip.AddrPortFrom(c.LB, 7005)
	srv := newUDPEcho(t, lab.Host, lb)
	cl := newUDPClient(t, c, lb)
	require.NoError(t, srv.push([]byte("server first"), cl.LocalAddr()), "the flow opens from the load balancer's side")
	require.NoError(t, cl.read())
	require.NoError(t, cl.ping())
	require.Equal(t, 1, srv.count())

	h := startT(context.Background(), t, Fault{Name: "dup", Action: UDPFault{
		Path:     Path{From: c.Pods, Gateway: c.Gateway, To: lb, Netns: lab.Host},
		Upstream: Impairment{Duplicate: 1},
		Seed:     1,
	}}, nil)
	// The host refuses the server's unasked datagram (EPERM from the
	// output rule); the real load balancer logs that and carries on.
	require.ErrorIs(t, srv.push([]byte("server first again"), cl.LocalAddr()), syscall.EPERM)
	require.NoError(t, cl.ping())
	require.Eventually(t, func() bool { return srv.count() == 3 }, 10*time.Second, time.Millisecond,
		"the pod's datagram went through the proxy (sent twice)")
	require.NoError(t, h.Stop(context.Background()))
	require.NoError(t, srv.push([]byte("after the fault"), cl.LocalAddr()), "the load balancer may open flows again")
}
