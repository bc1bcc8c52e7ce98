package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/topology"
)

type fakeProvider struct {
	up         bool
	ups, downs int
}

func (p *fakeProvider) Up(context.Context, clusters.Spec, ...clusters.UpOption) (*clusters.Environment, error) {
	p.ups++
	return &clusters.Environment{Name: "default"}, nil
}

func (p *fakeProvider) Down(context.Context, string) error { p.downs++; return nil }

func (p *fakeProvider) Status(context.Context, string) (*clusters.Environment, error) {
	if p.up {
		return &clusters.Environment{Name: "default"}, nil
	}
	return nil, fmt.Errorf("%w: default", clusters.ErrNotFound)
}

func options(t *testing.T, p clusters.Provider, keep bool) Options {
	return Options{Idle: time.Millisecond, Run: harnessrun.Options{
		Topology: &topology.Topology{Name: "default"}, Provider: p, Artifacts: t.TempDir(),
		BinDir: t.TempDir(), // no suite in it: the matrix fails at once
		Keep:   keep,
	}}
}

// The benchmark measures a fresh bring-up: it refuses a running environment
// rather than time a reuse.
func TestBenchRefusesARunningEnvironment(t *testing.T) {
	p := &fakeProvider{up: true}
	_, err := Run(context.Background(), options(t, p, false))
	require.ErrorContains(t, err, "already up")
	require.Zero(t, p.ups)
	require.Zero(t, p.downs)
}

// What bench brought up it takes down, also when the matrix fails, unless
// --keep was given.
func TestBenchTakesDownWhatItBroughtUp(t *testing.T) {
	for _, keep := range []bool{false, true} {
		p := &fakeProvider{}
		_, err := Run(context.Background(), options(t, p, keep))
		require.ErrorContains(t, err, "lacks")
		require.Equal(t, 1, p.ups)
		if keep {
			require.Zero(t, p.downs, "--keep leaves the clusters up")
		} else {
			require.Equal(t, 1, p.downs)
		}
	}
}
