package agent

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// ErrPanic is wrapped by the error of a goroutine of the agent that
// panicked.
var ErrPanic = guard.ErrPanic

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

func recovered(what string, r any) error { return guard.Recovered(what, r) }

// onPanic is the process's guard handler while the agent runs: a panic in
// any goroutine of the agent's parts (node kubelets, load balancers, the
// external DNS) is logged with its stack and stops the environment.
func (a *agent) onPanic(err error) {
	a.log.Error("panic; stopping the environment", "err", err)
	a.failure.fail(err)
}

// panicNote is the file, beside the agent log, that keeps the one-line
// panic of an agent that stopped after bring-up (nobody waits on it then):
// the next status or down reports it.
func panicNote(dir string) string { return filepath.Join(LogDir(dir), "panic.txt") }

// notePanic leaves err's first line in panicNote.
func (a *agent) notePanic(err error) {
	if werr := os.WriteFile(panicNote(a.dir), []byte(firstLine(err)+"\n"), 0o600); werr != nil {
		a.log.Error("cannot keep the panic for the next command", "err", werr)
	}
}

// ReadPanic returns the panic the agent of dir stopped after, if it did.
func ReadPanic(dir string) (string, bool) {
	data, err := os.ReadFile(panicNote(dir))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(data)), true
}

// ClearPanic forgets it (once reported, or when a new agent starts).
func ClearPanic(dir string) { _ = os.Remove(panicNote(dir)) }

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
