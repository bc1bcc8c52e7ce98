package run

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

// flakyThenGone answers Status with a transient error, then a live
// environment, then ErrNotFound.
type flakyThenGone struct {
	refusingProvider
	calls atomic.Int32
}

func (p *flakyThenGone) Status(context.Context, string) (*clusters.Environment, error) {
	switch p.calls.Add(1) {
	case 1:
		return nil, errors.New("the API server is slow")
	case 2:
		return &clusters.Environment{Name: "default"}, nil
	}
	return nil, clusters.ErrNotFound
}

// The suite is stopped, with ErrEnvironmentGone as the cause, once the
// provider no longer finds the environment; transient errors are no verdict.
func TestWatchEnvironmentStopsTheSuiteWhenTheEnvironmentGoes(t *testing.T) {
	p := &flakyThenGone{}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	done := make(chan struct{})
	go func() { watchEnvironment(ctx, p, "default", time.Millisecond, stop); close(done) }()
	<-done
	require.ErrorIs(t, context.Cause(ctx), ErrEnvironmentGone)
	require.ErrorIs(t, context.Cause(ctx), clusters.ErrNotFound)
	require.EqualValues(t, 3, p.calls.Load())
}
