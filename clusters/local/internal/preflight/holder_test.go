package preflight

import (
	"fmt"
	"io"
	"net"
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

// A free port has no holder; a connected (not listening) TCP socket on a
// port does not count as holding it.
func TestHoldersOfAFreePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.Equal(t, []int{os.Getpid()}, pidsOf(Holders("tcp", port)))
	ln.Close()
	require.Empty(t, Holders("tcp", port))
	require.Empty(t, Holders("udp", port))
}

// Without a holder to name (another user's process, seen without root),
// the advice falls back to ss.
func TestBusyPortWithoutAHolder(t *testing.T) {
	c := allGood()
	c.listen = func(network, addr string) (io.Closer, error) { return nil, fmt.Errorf("bind: address already in use") }
	c.holders = func(string, int) []Holder { return nil }
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
