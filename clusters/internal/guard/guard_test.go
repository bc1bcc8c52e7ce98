package guard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A panic in a goroutine started by Go reaches the handler as an error
// naming the goroutine and carrying the stack; the process lives on.
func TestGoHandsAPanicToTheHandler(t *testing.T) {
	got := make(chan error, 1)
	SetHandler(func(err error) { got <- err })
	t.Cleanup(func() { SetHandler(nil) })

	Go("lb: tcp forwarder of 198.19.100.1:443", func() {
		var m map[string]int
		m["boom"]++
	})
	select {
	case err := <-got:
		require.ErrorIs(t, err, ErrPanic)
		require.Contains(t, err.Error(), "the agent panicked in lb: tcp forwarder of 198.19.100.1:443: assignment to entry in nil map")
		require.Contains(t, err.Error(), "guard_test.go", "the error carries the stack")
	case <-time.After(10 * time.Second):
		t.Fatal("the handler got nothing")
	}
}

// Without a handler a panic is not swallowed.
func TestNoHandlerRepanics(t *testing.T) {
	SetHandler(nil)
	require.PanicsWithValue(t, "boom", func() {
		defer Recover("x")
		panic("boom")
	})
}
