package udpproxy

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peer is a UDP server on loopback that records what it receives and, when
// echo is set, sends every datagram back.
type peer struct {
	conn  net.PacketConn
	echo  bool
	mu    sync.Mutex
	seqs  []uint32
	data  [][]byte
	froms []netip.AddrPort
}

func newPeer(t *testing.T, echo bool) *peer {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	_ = c.(*net.UDPConn).SetReadBuffer(4 << 20)
	p := &peer{conn: c, echo: echo}
	t.Cleanup(func() { _ = c.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			b := append([]byte(nil), buf[:n]...)
			p.mu.Lock()
			if n >= 4 {
				p.seqs = append(p.seqs, binary.BigEndian.Uint32(b))
			}
			p.data = append(p.data, b)
			p.froms = append(p.froms, from.(*net.UDPAddr).AddrPort())
			p.mu.Unlock()
			if echo {
				_, _ = c.WriteTo(b, from)
			}
		}
	}()
	return p
}

func (p *peer) addr() netip.AddrPort { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (p *peer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.data)
}

func (p *peer) received() ([]uint32, [][]byte, []netip.AddrPort) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]uint32(nil), p.seqs...), append([][]byte(nil), p.data...), append([]netip.AddrPort(nil), p.froms...)
}

// start runs a proxy on loopback towards upstream and returns it with a
// client socket.
func start(t *testing.T, upstream netip.AddrPort, cfg Config) (*Proxy, net.PacketConn) {
	t.Helper()
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	_ = ln.(*net.UDPConn).SetReadBuffer(4 << 20)
	cfg.Conn = ln
	cfg.Upstream = upstream
	p, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	cl, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return p, cl
}

// pump sends n sequence-numbered datagrams of size bytes in batches and
// waits after each batch until the proxy has settled every packet and the
// sink has everything the proxy delivered, so no datagram is lost to a full
// socket buffer on loopback: every loss the test sees is the proxy's.
func pump(t *testing.T, p *Proxy, cl net.PacketConn, sink *peer, n, size int) {
	t.Helper()
	to := p.Addr()
	buf := make([]byte, size)
	const batch = 100
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint32(buf, uint32(i))
		_, err := cl.WriteTo(buf, to)
		require.NoError(t, err)
		if (i+1)%batch == 0 || i == n-1 {
			want := uint64(i + 1)
			require.Eventually(t, func() bool {
				s := p.Stats(Upstream)
				return s.Received == want && s.Delivered+s.Lost+s.Blackholed == s.Received+s.Duplicated && uint64(sink.count()) == s.Delivered
			}, 10*time.Second, time.Millisecond, "batch ending at %d never settled: %+v sink=%d", i, p.Stats(Upstream), sink.count())
		}
	}
}
