package podnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
	"github.com/vishvananda/netns"
)

func requireRoot(t *testing.T) {
	t.Helper()
	if err := RequireRoot(); err != nil {
		t.Skipf("skipping: this test builds real bridges and network namespaces: %v", err)
	}
}

// inNetns runs f on an OS thread moved into the named namespace; sockets
// that f creates stay in that namespace.
func inNetns(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			t.Error(err)
			return
		}
		target, err := netns.GetFromName(name)
		if err != nil {
			t.Error(err)
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			t.Error(err)
			return
		}
		f()
		if err := netns.Set(orig); err == nil {
			runtime.UnlockOSThread() // else the thread dies with the goroutine
		}
	}()
	<-done
}

// echoServer listens on addr:0 inside ns and echoes one line per connection.
func echoServer(t *testing.T, ns string, addr netip.Addr) netip.AddrPort {
	var ln net.Listener
	inNetns(t, ns, func() {
		var err error
		ln, err = net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
		require.NoError(t, err)
	})
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func roundTrip(c net.Conn) error {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	b := make([]byte, 5)
	if _, err := io.ReadFull(c, b); err != nil {
		return err
	}
	if string(b) != "ping\n" {
		return fmt.Errorf("echo returned %q", b)
	}
	return nil
}

func TestTwoPodsOnABridgeAndAcrossClusters(t *testing.T) {
	requireRoot(t)
	hostlock.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	// High indices and a per-process name keep clear of a running agent.
	suffix := fmt.Sprint(os.Getpid() % 100000)
	a, err := SetupCluster(ctx, ClusterConfig{Index: 87, Name: "pt" + suffix + "a", StateDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close(context.Background())) })
	b, err := SetupCluster(ctx, ClusterConfig{Index: 88, Name: "pt" + suffix + "b", StateDir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close(context.Background())) })

	start := time.Now()
	p1, err := a.AddPod(ctx, PodSpec{UID: "11111111-aaaa", ResolvConf: "nameserver 198.18.97.1\n", Hosts: "127.0.0.1 localhost\n"})
	require.NoError(t, err)
	t.Logf("one pod attached in %s", time.Since(start))
	p2, err := a.AddPod(ctx, PodSpec{UID: "22222222-bbbb"})
	require.NoError(t, err)
	p3, err := b.AddPod(ctx, PodSpec{UID: "33333333-cccc"})
	require.NoError(t, err)
	require.NotEqual(t, p1.IP, p2.IP)
	require.True(t, PodPrefix(87).Contains(p1.IP))
	require.True(t, PodPrefix(88).Contains(p3.IP))
	resolv, err := os.ReadFile("/etc/netns/" + p1.NetNS + "/resolv.conf")
	require.NoError(t, err)
	require.Equal(t, "nameserver 198.18.97.1\n", string(resolv))

	srv2 := echoServer(t, p2.NetNS, p2.IP)
	srv3 := echoServer(t, p3.NetNS, p3.IP)

	// From the host.
	c, err := net.DialTimeout("tcp", srv2.String(), 3*time.Second)
	require.NoError(t, err, "host → pod")
	require.NoError(t, roundTrip(c))

	// Pod to pod on one bridge, and across clusters through the host.
	for _, target := range []netip.AddrPort{srv2, srv3} {
		inNetns(t, p1.NetNS, func() {
			c, err := net.DialTimeout("tcp", target.String(), 3*time.Second)
			require.NoError(t, err, "pod %s → %s", p1.IP, target)
			require.NoError(t, roundTrip(c))
		})
	}

	// A rebuilt namespace keeps its address; a removed one is gone.
	again, err := a.AddPod(ctx, PodSpec{UID: "22222222-bbbb"})
	require.NoError(t, err)
	require.Equal(t, p2.IP, again.IP)
	require.NoError(t, a.RemovePod(ctx, "22222222-bbbb"))
	require.Equal(t, BridgeMAC(87), bridgeMAC(t, a.Bridge()), "ports coming and going leave the gateway's MAC alone")
	require.False(t, netnsExists(p2.NetNS))
	require.False(t, linkExists(p2.Veth))
	require.NotContains(t, a.Pods(), "22222222-bbbb")
}

func TestLoopbackAddresses(t *testing.T) {
	requireRoot(t)
	hostlock.Shared(t)
	ctx := context.Background()
	addr := netip.MustParseAddr("198.19.197.250")
	require.NoError(t, AddLoopback(ctx, addr))
	require.NoError(t, AddLoopback(ctx, addr), "idempotent")
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	require.NoError(t, err, "the address can be bound")
	ln.Close()
	require.NoError(t, DelLoopback(ctx, addr))
	require.NoError(t, DelLoopback(ctx, addr), "idempotent")
	addrs, err := LoopbackAddrs(ctx)
	require.NoError(t, err)
	require.NotContains(t, addrs, addr)
}

func bridgeMAC(t *testing.T, br string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + br + "/address")
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
