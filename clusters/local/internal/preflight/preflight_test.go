package preflight

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

type closer struct{}

func (closer) Close() error { return nil }

func allGood() Checks {
	return Checks{
		Root:     true,
		Argv:     []string{"./bin/harness", "up", "--topology", "my topo.yaml"},
		Tools:    []Tool{{"ip", "iproute2"}, {"nft", "nftables"}},
		Ports:    []Port{{"tcp", "0.0.0.0:6443", "kube-apiserver of region-a"}, {"udp", "127.0.0.88:53", "the external DNS"}},
		Disks:    []Disk{{Dir: "/cache", Min: 8 << 30, Why: "building the control plane", Hint: "set XDG_CACHE_HOME"}},
		geteuid:  func() int { return 0 },
		lookPath: func(s string) (string, error) { return "/usr/sbin/" + s, nil },
		listen:   func(string, string) (io.Closer, error) { return closer{}, nil },
		free:     func(string) (uint64, error) { return 100 << 30, nil },
		holders:  func(string, netip.AddrPort) []Holder { return nil },
	}
}

func TestAllGood(t *testing.T) {
	require.NoError(t, Run(allGood()))
}

func TestEveryProblemWithItsFix(t *testing.T) {
	c := allGood()
	c.geteuid = func() int { return 1000 }
	c.lookPath = func(s string) (string, error) {
		if s == "nft" {
			return "", errors.New("not found")
		}
		return "/usr/sbin/ip", nil
	}
	c.listen = func(network, addr string) (io.Closer, error) {
		if addr == "0.0.0.0:6443" {
			return nil, &net.OpError{Op: "listen", Net: network, Err: os.NewSyscallError("bind", syscall.EADDRINUSE)}
		}
		return nil, &net.OpError{Op: "listen", Net: network, Err: os.NewSyscallError("bind", syscall.EACCES)}
	}
	c.free = func(string) (uint64, error) { return 3 << 30, nil }
	c.holders = func(network string, addr netip.AddrPort) []Holder {
		if network == "tcp" && addr.Port() == 6443 {
			return []Holder{{PID: 4242, Command: "/usr/sbin/nginx -g daemon off;"}}
		}
		return nil
	}

	err := Run(c)
	require.ErrorIs(t, err, ErrFailed)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Problems, 4, "%v", err)
	msg := err.Error()
	require.Contains(t, msg, "not running as root (uid 1000)")
	require.Contains(t, msg, "fix: run as root: sudo ./bin/harness up --topology 'my topo.yaml'")
	require.Contains(t, msg, "nft is not on PATH")
	require.Contains(t, msg, "fix: apt-get install nftables")
	require.NotContains(t, msg, "ip is not on PATH")
	require.Contains(t, msg, "tcp 0.0.0.0:6443 (kube-apiserver of region-a) cannot be bound: address already in use; held by pid 4242 (/usr/sbin/nginx -g daemon off;)")
	require.Contains(t, msg, "fix: stop that program (e.g. `kill 4242`, or stop the service that runs it); the harness needs port 6443")
	require.NotContains(t, msg, "127.0.0.88", "a privileged port without root is the root check's business")
	require.Contains(t, msg, "only 3.0 GiB free in /cache; building the control plane needs at least 8.0 GiB")
	require.Contains(t, msg, "fix: free some space, or set XDG_CACHE_HOME")
}

// A port some process here holds is found busy with the real listen.
func TestBusyPortOnLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	freeAddr := free.Addr().String()
	free.Close()

	err = Run(Checks{Ports: []Port{{"tcp", ln.Addr().String(), "etcd of region-a"}, {"tcp", freeAddr, "etcd of region-b"}}})
	require.ErrorIs(t, err, ErrFailed)
	require.Contains(t, err.Error(), ln.Addr().String())
	require.NotContains(t, err.Error(), freeAddr)
	again, err := net.Listen("tcp", freeAddr)
	require.NoError(t, err, "the check released the port it bound")
	again.Close()
}

func TestFreeBytesWalksUpToAnExistingFolder(t *testing.T) {
	dir := t.TempDir()
	n, err := FreeBytes(dir + "/not/yet/made")
	require.NoError(t, err)
	require.Positive(t, n)
}

func TestGoRunBinaryBecomesBinHarness(t *testing.T) {
	require.Equal(t, "./bin/harness binaries", shellJoin([]string{"/tmp/go-build123/b001/exe/harness", "binaries"}))
}
