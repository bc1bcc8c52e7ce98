package faults

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

// tcpEcho serves line echo on addr inside ns and records the peers it saw.
type tcpEcho struct {
	mu    sync.Mutex
	peers []netip.Addr
}

func newTCPEcho(t *testing.T, ns string, addr netip.AddrPort) *tcpEcho {
	t.Helper()
	l, err := netnsx.Listen(ns, "tcp", addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	e := &tcpEcho{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.peers = append(e.peers, c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr())
			e.mu.Unlock()
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return e
}

func (e *tcpEcho) lastPeer() netip.Addr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.peers) == 0 {
		return netip.Addr{}
	}
	return e.peers[len(e.peers)-1]
}

// udpEcho answers datagrams on addr inside ns and counts them.
type udpEcho struct {
	mu sync.Mutex
	n  int
	pc net.PacketConn
}

// push sends b, unasked, to the peer to.
func (e *udpEcho) push(b []byte, to net.Addr) error {
	_, err := e.pc.WriteTo(b, to)
	return err
}

func newUDPEcho(t *testing.T, ns string, addr netip.AddrPort) *udpEcho {
	t.Helper()
	pc, err := netnsx.ListenPacket(ns, "udp", addr.String(), false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	e := &udpEcho{pc: pc}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			e.mu.Lock()
			e.n++
			e.mu.Unlock()
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	return e
}

func (e *udpEcho) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

// dialFrom connects from ns to addr within d.
func dialFrom(ns string, addr netip.AddrPort, d time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return netnsx.Dialer{Netns: ns}.DialContext(ctx, "tcp", addr.String())
}

// echoRTT sends a line on c and times the echo; it fails after within.
func echoRTT(c net.Conn, within time.Duration) (time.Duration, error) {
	t0 := time.Now()
	if err := c.SetDeadline(time.Now().Add(within)); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return 0, err
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// reachable reports whether ns can open a connection to addr and get an
// echo within d. Used for negative checks, so d only bounds the test time.
func reachable(ns string, addr netip.AddrPort, d time.Duration) bool {
	c, err := dialFrom(ns, addr, d)
	if err != nil {
		return false
	}
	defer c.Close()
	_, err = echoRTT(c, d)
	return err == nil
}

// udpClient is a UDP socket in the lab's pod namespace talking to an
// address of the host.
type udpClient struct {
	net.PacketConn
	to net.Addr
}

func newUDPClient(t *testing.T, c nstest.Cluster, to netip.AddrPort) *udpClient {
	t.Helper()
	pc, err := netnsx.ListenPacket(c.PodNetns, "udp", netip.AddrPortFrom(c.Pod, 0).String(), false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	return &udpClient{PacketConn: pc, to: udpAddr(to)}
}

// ping sends a datagram and waits (10 s at most) for one back.
func (u *udpClient) ping() error {
	if _, err := u.WriteTo([]byte("ping"), u.to); err != nil {
		return err
	}
	return u.read()
}

// read waits (10 s at most) for one datagram.
func (u *udpClient) read() error {
	_ = u.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err := u.ReadFrom(make([]byte, 64))
	return err
}

// startT is Start for tests: it fails tb when the injection fails and
// registers the undo with tb.Cleanup, so the fault is undone when the test
// ends, fails or panics.
func startT(ctx context.Context, tb testing.TB, f Fault, rec *Recorder) *Handle {
	tb.Helper()
	h, err := Start(ctx, f, rec)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	tb.Cleanup(func() {
		if err := h.Stop(context.Background()); err != nil {
			tb.Errorf("%v", err)
		}
	})
	return h
}
