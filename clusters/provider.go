package clusters

import (
	"context"
	"io"
	"log/slog"
)

// Provider creates or reuses the clusters of a Spec, reports on them and
// deletes them. A provider is safe to call from one goroutine at a time;
// implementations serialise concurrent callers across processes themselves.
type Provider interface {
	// Up brings up every cluster of spec, or reuses the running ones when an
	// environment of the same name already matches spec. An environment of
	// the same name that differs is refused with an error naming the
	// differences, unless WithRecreate is given.
	Up(ctx context.Context, spec Spec, opts ...UpOption) (*Environment, error)
	// Down stops and removes everything the environment called name owns.
	// Down of an environment that does not exist is not an error.
	Down(ctx context.Context, name string) error
	// Status describes the running environment called name, or returns an
	// error wrapping ErrNotFound when there is none.
	Status(ctx context.Context, name string) (*Environment, error)
}

// Prober is implemented by a provider that can tell whether an environment
// still runs more cheaply than Status, without asking its API servers:
// `harness run` asks every few seconds while its suites run.
type Prober interface {
	// Probe returns nil while the environment called name runs and an
	// error wrapping ErrNotFound once it has stopped; other errors are no
	// verdict.
	Probe(ctx context.Context, name string) error
}

// UpOption changes how Up works; see the With… constructors.
type UpOption func(*UpOptions)

// UpOptions are the settings that UpOption values change. Providers read
// them through ApplyUpOptions.
type UpOptions struct {
	// Recreate deletes an existing environment of the same name whose spec
	// differs, instead of refusing.
	Recreate bool
	// Beside brings the environment up beside the provider's other running
	// environments (on other addresses and ports) instead of refusing while
	// one runs. A provider that cannot place two refuses as without it.
	Beside bool
	// Progress receives human-readable progress lines (nil: discarded).
	Progress io.Writer
	// Logger receives structured logs (nil: discarded).
	Logger *slog.Logger
}

// WithRecreate makes Up delete and recreate an environment whose spec
// differs from the one asked for.
func WithRecreate() UpOption { return func(o *UpOptions) { o.Recreate = true } }

// WithBeside lets Up start the environment while other environments of
// the provider run, beside them.
func WithBeside() UpOption { return func(o *UpOptions) { o.Beside = true } }

// WithProgress sends progress lines (binary builds, clusters coming up) to w.
func WithProgress(w io.Writer) UpOption { return func(o *UpOptions) { o.Progress = w } }

// WithLogger sends structured logs to l.
func WithLogger(l *slog.Logger) UpOption { return func(o *UpOptions) { o.Logger = l } }

// ApplyUpOptions folds opts into an UpOptions with nil writers replaced by
// discarding ones.
func ApplyUpOptions(opts ...UpOption) UpOptions {
	var o UpOptions
	for _, f := range opts {
		f(&o)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
