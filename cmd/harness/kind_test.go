package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// --provider kind is checked before anything starts: flags that are the
// existing provider's are refused, and so is a run without root.
func TestKindProviderFlags(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	if os.Geteuid() != 0 {
		err := run(ctx, []string{"run", "--provider", "kind", "--topology", "../../topologies/default.yaml"}, &out, &errb)
		require.ErrorContains(t, err, "--provider kind needs root")
	}
	err := run(ctx, []string{"up", "--provider", "kind", "--kubeconfig", "/x"}, &out, &errb)
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
