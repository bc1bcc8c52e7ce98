package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nvcf/conformance/faults/internal/journal"
)

// undoTimeout bounds an undo that runs after its context ended.
const undoTimeout = 30 * time.Second

// Handle is an injected fault. Stop undoes it; it also undoes itself when
// its Duration ends or the context given to Start ends.
type Handle struct {
	rec  *Recorder
	f    Fault
	id   string
	undo undoFunc
	j    *journal.Journal
	env  *env

	once sync.Once
	done chan struct{}
	err  error
}

// ID identifies the fault in records, the journal and nftables comments.
func (h *Handle) ID() string { return h.id }

// Done is closed when the undo has finished.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err is the undo's error, after Done.
func (h *Handle) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Effect is what the fault did ("dropped 212 packets"), once Done.
func (h *Handle) Effect() string {
	select {
	case <-h.done:
		return h.env.result()
	default:
		return ""
	}
}

// Accepted is, once Done, how many clients went on over the hostile
// channel a fault offered: those that spoke plaintext to a Downgrade's
// man in the middle. Every other fault counts none.
func (h *Handle) Accepted() uint64 {
	select {
	case <-h.done:
		h.env.mu.Lock()
		defer h.env.mu.Unlock()
		return h.env.accepted
	default:
		return 0
	}
}

// Stop undoes the fault now (once; later calls wait for the first and
// return its error). The undo runs even if ctx has ended, bounded by 30 s.
func (h *Handle) Stop(ctx context.Context) error {
	h.once.Do(func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		err := h.undo(uctx)
		if err != nil {
			err = fmt.Errorf("undo fault %s (%s): %w", h.id, h.f.name(), err)
		} else if h.j != nil {
			// Keep the journal entry when the undo failed, so cleanup retries.
			err = h.j.Remove(h.id)
		}
		h.err = err
		h.rec.finish(h.id, time.Now(), err, h.env.result())
		log := h.rec.logger()
		if err != nil {
			log.Error("fault undo failed", "id", h.id, "err", err)
		} else {
			log.Info("fault undone", "id", h.id, "name", h.f.name())
		}
		close(h.done)
	})
	<-h.done
	return h.err
}

// Start waits f.Start, injects f, records and journals it, and returns a
// handle. The fault is undone when f.Duration has passed, when ctx ends, or
// when Stop is called, whichever comes first. If the injection fails,
// whatever it had changed is reverted and the error returned.
func Start(ctx context.Context, f Fault, rec *Recorder) (*Handle, error) {
	if f.Action == nil {
		return nil, fmt.Errorf("fault %q has no Action (use one of UDPFault, Downgrade, DNSFault, CertRotate, PartitionBetween, FromParams)", f.Name)
	}
	if err := seamOf(f.Action); err != nil {
		return nil, fmt.Errorf("fault %s on %s: %w", f.name(), f.Target, err)
	}
	if f.Start > 0 {
		t := time.NewTimer(f.Start)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("fault %s: context ended before its start: %w", f.name(), ctx.Err())
		case <-t.C:
		}
	}
	e := &env{id: newID(f.Kind()), log: rec.logger()}
	if rec != nil && rec.stateDir != "" {
		rec.clean.Do(func() {
			if cleaned, err := CleanupLeftovers(ctx, rec.stateDir, rec.log); err != nil {
				rec.log.Warn("clean up faults left by a killed run", "err", err)
			} else if len(cleaned) > 0 {
				rec.log.Info("removed faults left by a killed run", "count", len(cleaned))
			}
		})
		j, err := journal.Open(rec.stateDir)
		if err != nil {
			return nil, err
		}
		e.journal = j
		e.entry = journal.Entry{ID: e.id, Name: f.name(), Kind: string(f.Kind()), Target: f.Target.String(), Params: f.Action.Describe(), Started: time.Now()}
		if f.Duration > 0 {
			e.entry.Until = e.entry.Started.Add(f.Duration)
		}
		if err := j.Put(e.entry); err != nil {
			return nil, fmt.Errorf("journal fault %s: %w", e.id, err)
		}
	}
	undo, err := f.Action.inject(ctx, e)
	if err != nil {
		if e.journal != nil {
			err = errors.Join(err, e.journal.Remove(e.id))
		}
		return nil, fmt.Errorf("inject fault %s (%s on %s): %w", f.name(), f.Kind(), f.Target, err)
	}
	h := &Handle{rec: rec, f: f, id: e.id, undo: undo, j: e.journal, env: e, done: make(chan struct{})}
	rec.add(record{ID: e.id, Name: f.name(), Kind: f.Kind(), Target: f.Target.String(), Params: f.Action.Describe(), Injected: time.Now()})
	rec.logger().Info("fault injected", "id", e.id, "name", f.name(), "target", f.Target.String(), "params", f.Action.Describe())
	go func() {
		var expire <-chan time.Time
		if f.Duration > 0 {
			t := time.NewTimer(f.Duration)
			defer t.Stop()
			expire = t.C
		}
		select {
		case <-expire:
		case <-ctx.Done():
		case <-h.done:
			return
		}
		_ = h.Stop(ctx)
	}()
	return h, nil
}

// run injects f, waits until its Duration has passed or ctx ends, and
// undoes it, also when the caller panics. It returns the injection's or
// the undo's error; a context that ends early is not an error.
func run(ctx context.Context, f Fault, rec *Recorder) error {
	h, err := Start(ctx, f, rec)
	if err != nil {
		return err
	}
	defer func() { _ = h.Stop(ctx) }()
	if f.Duration == 0 {
		<-ctx.Done()
	} else {
		<-h.Done()
	}
	return h.Stop(ctx)
}
