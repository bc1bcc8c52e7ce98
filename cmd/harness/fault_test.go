package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

func TestFaultCommandWithoutClusters(t *testing.T) {
	state := t.TempDir()
	var out, errb bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"fault", "list", "--state", state}, &out, &errb))
	require.Contains(t, out.String(), "no active faults")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"fault", "kinds"}, &out, &errb))
	require.Contains(t, out.String(), "partition  FROM->TO")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"fault", "cleanup", "--state", state}, &out, &errb))
	require.Contains(t, out.String(), "nothing to clean up")

	// Injecting needs the running environment's address plan; the
	// parameters' checks are faults' tests.
	err := run(context.Background(), []string{"fault", "inject", "--state", state, "--topology", "../../topologies/default.yaml",
		"--kind", "partition", "--target", "workers->region-b"}, &out, &errb)
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorContains(t, run(context.Background(), []string{"fault", "explode"}, &out, &errb), "unknown subcommand")
}
