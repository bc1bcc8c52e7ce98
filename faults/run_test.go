package faults

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// counting is an action that counts injections and undos.
type counting struct {
	injected, undone *atomic.Int32
	injectErr        error
}

func newCounting() counting { return counting{injected: new(atomic.Int32), undone: new(atomic.Int32)} }

func (counting) Kind() Kind       { return "test" }
func (counting) Describe() string { return "counts" }
func (c counting) inject(context.Context, *env) (undoFunc, error) {
	if c.injectErr != nil {
		return nil, c.injectErr
	}
	c.injected.Add(1)
	return func(context.Context) error { c.undone.Add(1); return nil }, nil
}

func TestRunUndoesAfterDuration(t *testing.T) {
	c := newCounting()
	rec := NewRecorder("", nil)
	t0 := time.Now()
	require.NoError(t, run(context.Background(), Fault{Name: "n", Action: c, Duration: 50 * time.Millisecond}, rec))
	require.GreaterOrEqual(t, time.Since(t0), 50*time.Millisecond)
	require.Equal(t, int32(1), c.injected.Load())
	require.Equal(t, int32(1), c.undone.Load())
	r := rec.list()
	require.Len(t, r, 1)
	require.GreaterOrEqual(t, r[0].Undone.Sub(r[0].Injected), 50*time.Millisecond)
	require.Len(t, rec.activeAt(r[0].Injected.Add(time.Millisecond)), 1)
	require.Empty(t, rec.activeAt(r[0].Undone))
	require.Empty(t, rec.activeAt(r[0].Injected.Add(-time.Nanosecond)))
	require.Len(t, rec.during(r[0].Injected.Add(-time.Hour), r[0].Injected), 1)
	require.Empty(t, rec.during(r[0].Undone.Add(time.Second), r[0].Undone.Add(time.Hour)))
}

func TestRunUndoesWhenContextEnds(t *testing.T) {
	c := newCounting()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- run(ctx, Fault{Action: c}, nil) }()
	require.Eventually(t, func() bool { return c.injected.Load() == 1 }, 10*time.Second, time.Millisecond)
	require.Zero(t, c.undone.Load(), "open-ended until the context ends")
	cancel() // as Ctrl-C does through signal.NotifyContext
	require.NoError(t, <-done)
	require.Equal(t, int32(1), c.undone.Load())
}

func TestStopIsIdempotent(t *testing.T) {
	c := newCounting()
	h, err := Start(context.Background(), Fault{Action: c, Duration: time.Hour}, nil)
	require.NoError(t, err)
	require.NoError(t, h.Stop(context.Background()))
	require.NoError(t, h.Stop(context.Background()))
	<-h.Done()
	require.Equal(t, int32(1), c.undone.Load())
}

func TestStartTUndoesWhenTheTestEnds(t *testing.T) {
	c := newCounting()
	t.Run("inner", func(t *testing.T) {
		startT(context.Background(), t, Fault{Action: c}, nil)
		require.Zero(t, c.undone.Load())
	})
	require.Equal(t, int32(1), c.undone.Load())
}

func TestStartDelayAndInjectError(t *testing.T) {
	c := newCounting()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, Fault{Action: c, Start: time.Hour}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, c.injected.Load(), "never injected when the context ends before the start")

	bad := newCounting()
	bad.injectErr = errors.New("boom")
	dir := t.TempDir()
	_, err = Start(context.Background(), Fault{Name: "bad", Action: bad}, NewRecorder(dir, nil))
	require.ErrorContains(t, err, "inject fault bad")
	es, err := List(dir)
	require.NoError(t, err)
	require.Empty(t, es, "a failed injection leaves no journal entry")
	_, err = Start(context.Background(), Fault{Name: "none"}, nil)
	require.ErrorContains(t, err, "has no Action")
}

func TestTargetString(t *testing.T) {
	require.Equal(t, "workers->region-b", Target{From: "workers", To: "region-b"}.String())
	require.Equal(t, "region-a nvcf/stargate pods=app=stargate", Target{Cluster: "region-a", Service: "nvcf/stargate", Pods: "app=stargate"}.String())
}

func TestAvailable(t *testing.T) {
	require.NoError(t, available(Fault{Action: scale{}}))
	require.ErrorContains(t, available(Fault{}), "no Action")
}

// A network fault on clusters without an address plan is refused before
// anything is touched, wrapping ErrNoSeam (the scenario reports a skip).
func TestNetworkFaultWithoutSeam(t *testing.T) {
	_, err := Start(t.Context(), Fault{Action: UDPFault{}}, nil)
	require.ErrorIs(t, err, ErrNoSeam)
	_, err = Start(t.Context(), Fault{Action: partition{}}, nil)
	require.ErrorIs(t, err, ErrNoSeam)
	_, err = Start(t.Context(), Fault{Action: DNSFault{Intercepts: []DNSIntercept{{}}}}, nil)
	require.ErrorIs(t, err, ErrNoSeam)
	require.NoError(t, seamOf(scale{}), "API faults need no seam")
}
