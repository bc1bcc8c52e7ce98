package faults

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// record is one fault's life, as reports show it.
type record struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Target string `json:"target"`
	Params string `json:"params"`
	// Injected is when the fault took effect; Undone when its undo
	// finished (zero while active).
	Injected time.Time `json:"injected"`
	Undone   time.Time `json:"undone,omitzero"`
	// UndoError is the undo's error, if any.
	UndoError string `json:"undoError,omitempty"`
	// Effect says what the fault did, filled at undo: packets a partition
	// dropped, datagrams a UDP fault lost, clients a proxy served.
	Effect string `json:"effect,omitempty"`
}

// String is a one-line description for reports:
// "partition split (workers->region-b) 198.18.12.0/24… 17:20:01.123–17:20:11.130".
func (r record) String() string {
	end := "active"
	if !r.Undone.IsZero() {
		end = r.Undone.Format("15:04:05.000")
	}
	s := fmt.Sprintf("%s %s (%s) %s %s–%s", r.Kind, r.Name, r.Target, r.Params, r.Injected.Format("15:04:05.000"), end)
	if r.Effect != "" {
		s += " [" + r.Effect + "]"
	}
	if r.UndoError != "" {
		s += " undo failed: " + r.UndoError
	}
	return s
}

// activeAt reports whether the fault was in effect at t.
func (r record) activeAt(t time.Time) bool {
	return !t.Before(r.Injected) && (r.Undone.IsZero() || t.Before(r.Undone))
}

// Recorder keeps the records of the faults run through it, and journals
// active faults in a state directory. It is safe for concurrent use; a nil
// *Recorder records nothing.
type Recorder struct {
	stateDir string
	log      *slog.Logger
	clean    sync.Once
	mu       sync.Mutex
	records  []record
}

// NewRecorder returns a recorder that journals active faults in stateDir
// ("" = no journal; then a killed run's leftovers cannot be cleaned up)
// and logs to log (nil = discard). Before its first fault it removes the
// leftovers of killed runs in stateDir (CleanupLeftovers).
func NewRecorder(stateDir string, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recorder{stateDir: stateDir, log: log}
}

func (r *Recorder) logger() *slog.Logger {
	if r == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.log
}

func (r *Recorder) add(rec record) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
}

func (r *Recorder) finish(id string, at time.Time, err error, effect string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.records {
		if r.records[i].ID == id {
			r.records[i].Undone = at
			r.records[i].Effect = effect
			if err != nil {
				r.records[i].UndoError = err.Error()
			}
		}
	}
}

// list returns every record, in injection order.
func (r *Recorder) list() []record {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.records...)
}

// activeAt returns the faults that were in effect at t.
func (r *Recorder) activeAt(t time.Time) []record {
	var out []record
	for _, rec := range r.list() {
		if rec.activeAt(t) {
			out = append(out, rec)
		}
	}
	return out
}

// active returns the faults in effect now.
func (r *Recorder) active() []record { return r.activeAt(time.Now()) }

// during returns the faults in effect at any moment of [from, to], for an
// assertion that took a while.
func (r *Recorder) during(from, to time.Time) []record {
	var out []record
	for _, rec := range r.list() {
		if !rec.Injected.After(to) && (rec.Undone.IsZero() || rec.Undone.After(from)) {
			out = append(out, rec)
		}
	}
	return out
}
