package tcpproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoServer answers every line with the same line, on loopback.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

func startProxy(t *testing.T, upstream string, toxics ...Toxic) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p, err := New(Config{Listener: l, Upstream: upstream, Toxics: toxics})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string) time.Duration {
	t.Helper()
	t0 := time.Now()
	_, err := io.WriteString(c, msg+"\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, msg+"\n", line)
	return time.Since(t0)
}

func TestLatencyMeasured(t *testing.T) {
	up := echoServer(t)
	p := startProxy(t, up,
		Toxic{Type: "latency", Stream: "upstream", Attributes: map[string]int64{"latency": 80, "jitter": 10}},
		Toxic{Type: "latency", Stream: "downstream", Attributes: map[string]int64{"latency": 80, "jitter": 10}},
	)
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	var min time.Duration = time.Hour
	for i := 0; i < 5; i++ {
		d := roundTrip(t, c, r, "ping")
		min = minDur(min, d)
		t.Logf("round trip through 80±10 ms each way: %v", d)
	}
	require.GreaterOrEqual(t, min, 135*time.Millisecond, "at least 70 ms each way, minus clock slack")

	// Undo: removing the toxics restores a fast path on the same connection.
	require.NoError(t, p.RemoveToxic("latency_upstream"))
	require.NoError(t, p.RemoveToxic("latency_downstream"))
	fast := time.Hour
	for i := 0; i < 5; i++ {
		fast = minDur(fast, roundTrip(t, c, r, "pong"))
	}
	require.Less(t, fast, 140*time.Millisecond)
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func TestResetPeer(t *testing.T) {
	up := echoServer(t)
	p := startProxy(t, up, Toxic{Type: "reset_peer", Stream: "upstream", Attributes: map[string]int64{"timeout": 0}})
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, _ = io.WriteString(c, "x\n")
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	_, err = c.Read(make([]byte, 8))
	require.Error(t, err)
	require.True(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF), "got %v", err)
}

func TestLimitDataClosesAfterBytes(t *testing.T) {
	up := echoServer(t)
	p := startProxy(t, up, Toxic{Type: "limit_data", Stream: "downstream", Attributes: map[string]int64{"bytes": 10}})
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "0123456789abcdefghij\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(got))
}

func TestTimeoutBlackholesUntilRemoved(t *testing.T) {
	up := echoServer(t)
	p := startProxy(t, up, Toxic{Name: "hole", Type: "timeout", Stream: "upstream", Attributes: map[string]int64{"timeout": 0}})
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "lost\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = c.Read(make([]byte, 8))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "nothing may come back through a blackhole")
}

func TestBadToxicNamesTheTypes(t *testing.T) {
	up := echoServer(t)
	p := startProxy(t, up)
	err := p.AddToxic(Toxic{Type: "netem", Stream: "upstream"})
	require.ErrorContains(t, err, "latency, bandwidth")
	err = p.AddToxic(Toxic{Type: "latency", Stream: "sideways"})
	require.ErrorContains(t, err, "want upstream or downstream")
}

func TestCloseEndsConnections(t *testing.T) {
	up := echoServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p, err := New(Config{Listener: l, Upstream: up})
	require.NoError(t, err)
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	roundTrip(t, c, bufio.NewReader(c), "hello")
	require.NoError(t, p.Close())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	_, err = c.Read(make([]byte, 8))
	require.Error(t, err)
	_, err = net.Dial("tcp", p.Addr().String())
	require.Error(t, err, "the listener is closed")
}

func TestBandwidthLimitsThroughput(t *testing.T) {
	up := echoServer(t)
	// 50 KB/s downstream: 25 KB take at least about half a second.
	p := startProxy(t, up, Toxic{Type: "bandwidth", Stream: "downstream", Attributes: map[string]int64{"rate": 50}})
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	payload := make([]byte, 25*1024)
	t0 := time.Now()
	go func() { _, _ = c.Write(payload) }()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = io.ReadFull(c, make([]byte, len(payload)))
	require.NoError(t, err)
	took := time.Since(t0)
	t.Logf("25 KB through 50 KB/s: %v", took)
	require.GreaterOrEqual(t, took, 400*time.Millisecond)
}

func TestSlowCloseDelaysTheClose(t *testing.T) {
	// An upstream that closes at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	p := startProxy(t, l.Addr().String(), Toxic{Type: "slow_close", Stream: "downstream", Attributes: map[string]int64{"delay": 300}})
	c, err := net.Dial("tcp", p.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	t0 := time.Now()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
	require.GreaterOrEqual(t, time.Since(t0), 290*time.Millisecond)
}
