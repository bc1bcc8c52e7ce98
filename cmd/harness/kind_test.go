package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// --provider kind brings clusters up, shows and removes them; what it
// cannot do yet (the matrix, faults) is refused with the reason, before
// anything starts.
func TestKindProviderFlags(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"run", "--provider", "kind"}, &out, &errb)
	require.ErrorContains(t, err, "does not run the matrix yet")
	err = run(ctx, []string{"bench", "--provider", "kind"}, &out, &errb)
	require.ErrorContains(t, err, "does not run the matrix yet")
	err = run(ctx, []string{"fault", "list", "--provider", "kind", "--topology", "topologies/default.yaml"}, &out, &errb)
	require.ErrorContains(t, err, "no fault seams yet")
	err = run(ctx, []string{"up", "--provider", "kind", "--kubeconfig", "/x"}, &out, &errb)
	require.ErrorContains(t, err, "are for --provider existing; the kind provider makes its own")
	err = run(ctx, []string{"up", "--provider", "kinder"}, &out, &errb)
	require.ErrorContains(t, err, "want embedded, existing or kind")

	out.Reset()
	require.NoError(t, run(ctx, []string{"down", "--provider", "kind"}, &out, &errb))
	require.Contains(t, out.String(), "nothing is up")
	out.Reset()
	require.NoError(t, run(ctx, []string{"status", "--provider", "kind"}, &out, &errb))
	require.Contains(t, out.String(), "nothing is up")
	err = run(ctx, []string{"kind", "images"}, &out, &errb)
	require.ErrorContains(t, err, "the subcommand is node-image")
}
