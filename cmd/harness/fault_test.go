package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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

	err := run(context.Background(), []string{"fault", "inject", "--state", state, "--topology", "../../topologies/default.yaml",
		"--kind", "udp", "--target", "workers->198.19.101.3:50072", "--param", "loss=20%,lossy=1"}, &out, &errb)
	require.ErrorContains(t, err, "unknown params lossy")
	err = run(context.Background(), []string{"fault", "inject", "--state", state, "--topology", "../../topologies/default.yaml",
		"--kind", "partition", "--target", "workers->nowhere"}, &out, &errb)
	require.ErrorContains(t, err, `cluster "nowhere" is not in the topology`)
	require.ErrorContains(t, run(context.Background(), []string{"fault", "explode"}, &out, &errb), "unknown subcommand")
}
