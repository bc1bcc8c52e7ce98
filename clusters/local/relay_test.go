package local

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

// relay reads what the agent writes on its notify pipe.
func TestRelay(t *testing.T) {
	for name, tc := range map[string]struct {
		lines   string
		closeW  bool
		wantErr string
	}{
		"ready":      {lines: "progress a: API server ready\nready\n"},
		"error":      {lines: "progress a: x\nerror cluster a: boom\n", wantErr: "cluster a: boom"},
		"agent died": {lines: "progress a: x\n", closeW: true, wantErr: "exited before it was ready"},
	} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			_, err = w.WriteString(tc.lines)
			require.NoError(t, err)
			if tc.closeW {
				w.Close()
			} else {
				defer w.Close()
			}
			var progress bytes.Buffer
			o := clusters.ApplyUpOptions(clusters.WithProgress(&progress))
			err = relay(context.Background(), r, o, 10*time.Second)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Contains(t, progress.String(), "a: API server ready")
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestRelayTimeout(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	err = relay(context.Background(), r, clusters.ApplyUpOptions(), 50*time.Millisecond)
	require.ErrorContains(t, err, "not ready after")
}

func TestUpRefusesInvalidSpec(t *testing.T) {
	p := New(Options{StateRoot: t.TempDir()})
	_, err := p.Up(context.Background(), clusters.Spec{Name: "x"})
	require.ErrorIs(t, err, clusters.ErrInvalidSpec)
}

func TestStatusOfMissingEnvironment(t *testing.T) {
	p := New(Options{StateRoot: t.TempDir()})
	_, err := p.Status(context.Background(), "nope")
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorIs(t, p.(clusters.Prober).Probe(context.Background(), "nope"), clusters.ErrNotFound)
	require.NoError(t, p.Down(context.Background(), "nope"), "down of nothing is not an error")
}
