package agent

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// ErrPanic is wrapped by the error of a goroutine of the agent that
// panicked.
var ErrPanic = errors.New("the agent panicked")

// failure keeps the first fatal error of the agent's goroutines and stops
// the environment (cancels the run) when one happens.
type failure struct {
	once sync.Once
	mu   sync.Mutex
	err  error
	stop func() // cancels the run: bring-up ends, teardown follows
}

// fail records err (the first one wins) and stops the run.
func (f *failure) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	stop := f.stop
	f.mu.Unlock()
	if stop != nil {
		f.once.Do(stop)
	}
}

// get is the first recorded error, or nil.
func (f *failure) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// recovered turns a recovered panic value into an error naming what
// panicked, with the stack.
func recovered(what string, r any) error {
	return fmt.Errorf("%w in %s: %v\n%s", ErrPanic, what, r, debug.Stack())
}

// guard runs fn; a panic in it is logged with its stack, recorded as the
// agent's failure (which stops the environment cleanly) and returned as
// an error. Every goroutine the agent starts runs under guard.
func (a *agent) guard(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = recovered(what, r)
			a.log.Error("panic; stopping the environment", "in", what, "err", err)
			a.failure.fail(err)
		}
	}()
	return fn()
}

// goGuard runs fn in a new goroutine under guard.
func (a *agent) goGuard(what string, fn func()) {
	go func() { _ = a.guard(what, func() error { fn(); return nil }) }()
}
