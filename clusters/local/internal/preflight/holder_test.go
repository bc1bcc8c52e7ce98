package preflight

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A port held by a program is reported with its pid and command line, for
// TCP and UDP, on the port alone (whichever address the program bound).
func TestBusyPortNamesTheProgram(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	tcpAddr, udpAddr := ln.Addr().String(), pc.LocalAddr().String()

	err = Run(Checks{Ports: []Port{{"tcp", tcpAddr, "etcd of region-a"}, {"udp", udpAddr, "the external DNS"}}})
	require.ErrorIs(t, err, ErrFailed)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Problems, 2, "%v", err)
	me := fmt.Sprintf("held by pid %d (%s", os.Getpid(), os.Args[0])
	for i, addr := range []string{tcpAddr, udpAddr} {
		_, port, _ := net.SplitHostPort(addr)
		require.Contains(t, pe.Problems[i].What, addr)
		require.Contains(t, pe.Problems[i].What, me, "the holder is named")
		require.Equal(t, "stop that program (e.g. `kill "+strconv.Itoa(os.Getpid())+"`, or stop the service that runs it); the harness needs port "+port, pe.Problems[i].Fix)
	}
}

// A socket holds its own address, the wildcard address of its port, and
// no other address of that port; a closed one holds nothing.
func TestHoldersMatchTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ap := netip.MustParseAddrPort(ln.Addr().String())
	other := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.89"), ap.Port())
	wildcard := netip.AddrPortFrom(netip.IPv4Unspecified(), ap.Port())
	require.Equal(t, []int{os.Getpid()}, pidsOf(Holders("tcp", ap)))
	require.Equal(t, []int{os.Getpid()}, pidsOf(Holders("tcp", wildcard)))
	require.Empty(t, Holders("tcp", other), "another address of the port is free")
	require.Empty(t, Holders("udp", ap))
	ln.Close()
	require.Empty(t, Holders("tcp", ap))
}

// A process of a harness environment is named as such, with how to bring
// its environment down rather than kill it.
func TestBusyPortOfAnotherEnvironment(t *testing.T) {
	c := allGood()
	c.Ports = c.Ports[:1]
	c.listen = func(string, string) (io.Closer, error) { return nil, errors.New("bind: address already in use") }
	c.holders = func(string, netip.AddrPort) []Holder {
		return []Holder{{PID: 27526, Command: "kube-apiserver --etcd-servers=…", Env: "/root/.local/state/nvcf-harness/default"}}
	}
	err := Run(c)
	require.ErrorContains(t, err, `held by pid 27526 (kube-apiserver --etcd-servers=…), of the harness environment "default" (state /root/.local/state/nvcf-harness/default)`)
	require.ErrorContains(t, err, "fix: bring that environment down: XDG_STATE_HOME=/root/.local/state harness down --name default (or harness down --purge)")
}

func TestProcAddr(t *testing.T) {
	ap, ok := procAddr("5800007F:0035") // /proc/net/tcp: 127.0.0.88:53
	require.True(t, ok)
	require.Equal(t, netip.MustParseAddrPort("127.0.0.88:53"), ap)
	ap, ok = procAddr("00000000000000000000000000000000:1A0B") // [::]:6667
	require.True(t, ok)
	require.True(t, ap.Addr().IsUnspecified())
	require.EqualValues(t, 0x1A0B, ap.Port())
	_, ok = procAddr("zz:1")
	require.False(t, ok)
}

// Without a holder to name (another user's process, seen without root),
// the advice falls back to ss.
func TestBusyPortWithoutAHolder(t *testing.T) {
	c := allGood()
	c.listen = func(network, addr string) (io.Closer, error) { return nil, fmt.Errorf("bind: address already in use") }
	c.holders = func(string, netip.AddrPort) []Holder { return nil }
	c.Ports = c.Ports[:1]
	err := Run(c)
	require.ErrorContains(t, err, "tcp 0.0.0.0:6443 (kube-apiserver of region-a) cannot be bound: bind: address already in use")
	require.ErrorContains(t, err, "fix: find the program with `ss -ltnp 'sport = :6443'` and stop it")
}

func pidsOf(hs []Holder) []int {
	var out []int
	for _, h := range hs {
		out = append(out, h.PID)
	}
	return out
}
