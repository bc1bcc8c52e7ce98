package udpproxy

import (
	"bytes"
	"math"
	"math/bits"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLossRateWithinTolerance(t *testing.T) {
	sink := newPeer(t, false)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Loss: 0.3}, Seed: 7})
	const n = 10000
	pump(t, p, cl, sink, n, 64)
	got := 1 - float64(sink.count())/n
	t.Logf("30%% loss: measured %.4f over %d packets", got, n)
	require.InDelta(t, 0.3, got, 0.03, "measured loss rate")
	require.Equal(t, uint64(n), p.Stats(Upstream).Lost+p.Stats(Upstream).Delivered)
}

func TestBurstLossComesInBursts(t *testing.T) {
	sink := newPeer(t, false)
	ge := BurstLoss(0.3, 8)
	require.InDelta(t, 0.3, ge.Rate(), 1e-9)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Burst: &ge}, Seed: 11})
	const n = 20000
	pump(t, p, cl, sink, n, 32)
	seqs, _, _ := sink.received()
	got := 1 - float64(len(seqs))/n
	// Mean length of runs of consecutive losses, from the gaps in sequence numbers.
	runs, lost := 0, 0
	next := uint32(0)
	for _, s := range append(seqs, n) {
		if s > next {
			runs++
			lost += int(s - next)
		}
		next = s + 1
	}
	mean := float64(lost) / float64(runs)
	t.Logf("burst loss: rate %.4f, mean burst %.2f packets (Bernoulli 30%% would give 1.43)", got, mean)
	require.InDelta(t, 0.3, got, 0.05)
	require.Greater(t, mean, 4.0)
}

func TestDelayIsApplied(t *testing.T) {
	echo := newPeer(t, true)
	imp := Impairment{Delay: 100 * time.Millisecond, Jitter: 20 * time.Millisecond}
	p, cl := start(t, echo.addr(), Config{Up: imp, Down: imp, Seed: 3})
	var rtts []time.Duration
	buf := make([]byte, 64)
	for i := 0; i < 10; i++ {
		t0 := time.Now()
		_, err := cl.WriteTo([]byte{0, 0, 0, byte(i)}, p.Addr())
		require.NoError(t, err)
		require.NoError(t, cl.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, _, err = cl.ReadFrom(buf)
		require.NoError(t, err)
		rtts = append(rtts, time.Since(t0))
	}
	t.Logf("round trips with 100±20 ms each way: %v", rtts)
	for _, r := range rtts {
		// Each way waits at least Delay-Jitter; the upper side is left loose.
		require.GreaterOrEqual(t, r, 155*time.Millisecond)
	}
}

func TestDuplicationCounted(t *testing.T) {
	sink := newPeer(t, false)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Duplicate: 0.25}, Seed: 5})
	const n = 4000
	pump(t, p, cl, sink, n, 32)
	seqs, _, _ := sink.received()
	seen := map[uint32]int{}
	for _, s := range seqs {
		seen[s]++
	}
	dups := 0
	for _, c := range seen {
		require.LessOrEqual(t, c, 2)
		if c == 2 {
			dups++
		}
	}
	require.Len(t, seen, n, "duplication must not lose packets")
	require.Equal(t, int(p.Stats(Upstream).Duplicated), dups)
	require.InDelta(t, 0.25, float64(dups)/n, 0.04)
}

func TestReorderCounted(t *testing.T) {
	sink := newPeer(t, false)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Reorder: 0.2}, Seed: 9})
	const n = 4000
	pump(t, p, cl, sink, n, 32)
	seqs, _, _ := sink.received()
	require.Len(t, seqs, n)
	inversions := 0
	for i := 1; i < len(seqs); i++ {
		if seqs[i] < seqs[i-1] {
			inversions++
		}
	}
	st := p.Stats(Upstream)
	t.Logf("reorder 20%%: %d inversions seen, %d counted", inversions, st.Reordered)
	require.Equal(t, int(st.Reordered), inversions)
	// A held packet waits for the next one, so about 0.2·0.8 of packets swap.
	require.InDelta(t, 0.2*0.8, float64(inversions)/n, 0.05)
}

func TestCorruptionFlipsOneBit(t *testing.T) {
	sink := newPeer(t, false)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Corrupt: 1}, Seed: 1})
	payload := bytes.Repeat([]byte{0xA5}, 200)
	for i := 0; i < 50; i++ {
		_, err := cl.WriteTo(payload, p.Addr())
		require.NoError(t, err)
		require.Eventually(t, func() bool { return sink.count() == i+1 }, 10*time.Second, time.Millisecond)
	}
	_, data, _ := sink.received()
	for _, d := range data {
		diff := 0
		for i := range d {
			diff += bits.OnesCount8(d[i] ^ payload[i])
		}
		require.Equal(t, 1, diff)
	}
	require.Equal(t, uint64(50), p.Stats(Upstream).Corrupted)
}

func TestBlackholeDropsThenHeals(t *testing.T) {
	sink := newPeer(t, false)
	p, cl := start(t, sink.addr(), Config{Up: Impairment{Blackhole: Schedule{On: time.Hour}}})
	pump(t, p, cl, sink, 300, 16)
	require.Zero(t, sink.count())
	require.Equal(t, uint64(300), p.Stats(Upstream).Blackholed)
	p.Set(Upstream, Impairment{})
	pump2 := func() {
		_, err := cl.WriteTo([]byte("healed"), p.Addr())
		require.NoError(t, err)
	}
	pump2()
	require.Eventually(t, func() bool { return sink.count() == 1 }, 10*time.Second, time.Millisecond)
}

func TestScheduleWindows(t *testing.T) {
	s := Schedule{Delay: time.Second, On: 2 * time.Second, Off: 3 * time.Second}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{0, false}, {time.Second, true}, {2900 * time.Millisecond, true}, {3 * time.Second, false}, {5900 * time.Millisecond, false}, {6 * time.Second, true}} {
		require.Equal(t, c.want, s.active(c.at), "at %v", c.at)
	}
	once := Schedule{On: time.Second}
	require.True(t, once.active(0))
	require.False(t, once.active(time.Hour))
	require.False(t, Schedule{}.active(0))
}

func TestRebindChangesSourcePortAndKeepsFlow(t *testing.T) {
	echo := newPeer(t, true)
	p, cl := start(t, echo.addr(), Config{})
	buf := make([]byte, 16)
	ping := func() {
		_, err := cl.WriteTo([]byte("ping"), p.Addr())
		require.NoError(t, err)
		require.NoError(t, cl.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, _, err := cl.ReadFrom(buf)
		require.NoError(t, err)
		require.Equal(t, "ping", string(buf[:n]))
	}
	ping()
	moved, err := p.Rebind()
	require.NoError(t, err)
	require.Equal(t, 1, moved)
	ping()
	_, _, froms := echo.received()
	require.Len(t, froms, 2)
	require.NotEqual(t, froms[0].Port(), froms[1].Port(), "the upstream source port must change")
}

func TestSessionsPerClient(t *testing.T) {
	echo := newPeer(t, true)
	p, c1 := start(t, echo.addr(), Config{})
	c2, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer c2.Close()
	for i, c := range []net.PacketConn{c1, c2} {
		msg := []byte{byte('a' + i)}
		_, err := c.WriteTo(msg, p.Addr())
		require.NoError(t, err)
		buf := make([]byte, 8)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, _, err := c.ReadFrom(buf)
		require.NoError(t, err)
		require.Equal(t, msg, buf[:n])
	}
	require.Equal(t, 2, p.Sessions())
	require.False(t, math.IsNaN(BurstLoss(1, 1).Rate()))
}
