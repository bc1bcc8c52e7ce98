package agent

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/internal/guard"
	"github.com/nvcf/conformance/internal/syncbuf"
)

// A panic in a goroutine of the agent is recovered: logged with its stack,
// recorded as the agent's failure, the run stopped (once), and returned as
// an error naming where it happened; the launcher's line has no stack.
func TestGuardRecoversAndStops(t *testing.T) {
	var logs bytes.Buffer
	a := &agent{log: slog.New(slog.NewTextHandler(&logs, nil))}
	stops := 0
	a.failure.stop = func() { stops++ }

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			errs[i] = a.guard("cluster a: node a-0", func() error {
				var m map[string]int
				m["boom"]++ // a nil-map write: a runtime panic
				return nil
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.ErrorIs(t, err, ErrPanic)
		require.Contains(t, err.Error(), "in cluster a: node a-0: assignment to entry in nil map")
		require.Contains(t, err.Error(), "panic_test.go", "the error carries the stack")
	}
	require.Equal(t, 1, stops)
	require.ErrorIs(t, a.failure.get(), ErrPanic)
	require.Contains(t, logs.String(), "panic; stopping the environment")
	require.Contains(t, logs.String(), "panic_test.go")

	line := firstLine(a.failure.get())
	require.NotContains(t, line, "\n")
	require.Contains(t, line, "the agent panicked in cluster a: node a-0")
	require.Contains(t, line, "stack in the agent log")

	// An ordinary error passes through untouched and stops nothing.
	plain := errors.New("plain")
	require.Equal(t, plain, a.guard("x", func() error { return plain }))
	require.Equal(t, 1, stops)
}

// A panic in a goroutine of the agent's parts (started with guard.Go, as
// the load balancers, the external DNS and the node kubelets do) reaches
// the agent's handler: logged with its stack, recorded, the run stopped.
// The agent then keeps its first line beside the log for the next command.
func TestPanicInAPartsGoroutineStopsTheAgent(t *testing.T) {
	var logs syncbuf.Buffer
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(LogDir(dir), 0o700))
	a := &agent{dir: dir, log: slog.New(slog.NewTextHandler(&logs, nil))}
	stopped := make(chan struct{})
	a.failure.stop = func() { close(stopped) }
	guard.SetHandler(a.onPanic)
	t.Cleanup(func() { guard.SetHandler(nil) })

	guard.Go("lb: tcp connection", func() { panic("upstream gone") })
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the panic did not stop the agent")
	}
	perr := a.failure.get()
	require.ErrorIs(t, perr, ErrPanic)
	require.Contains(t, perr.Error(), "in lb: tcp connection: upstream gone")
	require.Contains(t, logs.String(), "panic; stopping the environment")
	require.Contains(t, logs.String(), "panic_test.go", "the stack is in the log")

	a.notePanic(perr)
	line, ok := ReadPanic(dir)
	require.True(t, ok)
	require.Equal(t, "the agent panicked in lb: tcp connection: upstream gone (stack in the agent log)", line)
	ClearPanic(dir)
	_, ok = ReadPanic(dir)
	require.False(t, ok)
}
