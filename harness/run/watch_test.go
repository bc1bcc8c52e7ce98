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

// probingProvider answers Probe, alive twice and then gone, and fails the
// test if the watch falls back to Status (API requests every interval).
type probingProvider struct {
	refusingProvider
	t      *testing.T
	probes atomic.Int32
}

func (p *probingProvider) Status(context.Context, string) (*clusters.Environment, error) {
	p.t.Error("Status called although the provider probes")
	return nil, errors.New("not this way")
}

func (p *probingProvider) Probe(context.Context, string) error {
	if p.probes.Add(1) <= 2 {
		return nil
	}
	return clusters.ErrNotFound
}

// A provider that probes is asked that way, not through Status.
func TestWatchEnvironmentProbesWhenTheProviderCan(t *testing.T) {
	p := &probingProvider{t: t}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	watchEnvironment(ctx, p, "default", time.Millisecond, stop)
	require.ErrorIs(t, context.Cause(ctx), ErrEnvironmentGone)
	require.EqualValues(t, 3, p.probes.Load())
}
