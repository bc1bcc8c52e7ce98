// Package guard runs the agent's goroutines so that a panic in any of them
// stops the environment cleanly instead of killing the agent: the panic is
// recovered, turned into an error with the stack, and handed to the
// process's handler (the agent's, which logs it, stops bring-up or
// serving and tears the environment down). A panic is a process-wide
// event, so the handler is process-wide too; without one a recovered
// panic is re-raised, as if unguarded.
package guard

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// ErrPanic is wrapped by the error of a goroutine that panicked.
var ErrPanic = errors.New("the agent panicked")

var handler atomic.Pointer[func(error)]

// SetHandler makes h receive every recovered panic of this process (nil:
// re-raise them). The agent sets it once, before it starts anything.
func SetHandler(h func(error)) {
	if h == nil {
		handler.Store(nil)
		return
	}
	handler.Store(&h)
}

// Recovered turns a recovered panic value into an error naming what
// panicked, with the stack.
func Recovered(what string, r any) error {
	return fmt.Errorf("%w in %s: %v\n%s", ErrPanic, what, r, debug.Stack())
}

// Go runs fn in a new goroutine; a panic in it ends the goroutine and goes
// to the handler. what names the goroutine in the error ("lb: tcp
// forwarder of 198.19.100.1:443").
func Go(what string, fn func()) {
	go func() {
		defer Recover(what)
		fn()
	}()
}

// Recover is deferred at the top of a goroutine started some other way (a
// library's callback): it hands a panic to the handler.
func Recover(what string) {
	r := recover()
	if r == nil {
		return
	}
	h := handler.Load()
	if h == nil {
		panic(r)
	}
	(*h)(Recovered(what, r))
}
