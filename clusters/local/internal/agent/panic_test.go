package agent

import (
	"bytes"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
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
