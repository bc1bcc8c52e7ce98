package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/harness/campaignrun"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/matrix"
)

// Bad campaign input is refused before anything starts, with an error
// that names the flag and what would fix it.
func TestCampaignRefusesBadInput(t *testing.T) {
	for args, want := range map[string]string{
		"--run tls/":                   "a campaign runs none",
		"--pylons 0":                   "--pylons 0: want 1 or more",
		"--bad-pylons -1":              "--bad-pylons -1",
		"--duration 2s":                "--duration 2s: want at least 10s",
		"--settle 1s":                  "--settle 1s: want at least 5s",
		"--kinds partition,earthquake": `unknown fault kind "earthquake"`,
		"--defect no-such-defect":      `--defect "no-such-defect" is not a registered defect`,
		"extra":                        "unexpected arguments",
	} {
		var out, errb bytes.Buffer
		err := runCampaign(context.Background(), splitArgs(args), &out, &errb)
		require.ErrorContains(t, err, want, args)
	}
}

func splitArgs(s string) []string {
	var out []string
	for _, f := range bytes.Fields([]byte(s)) {
		out = append(out, string(f))
	}
	return out
}

// The replay command names the harness by its path, as a case's repro
// does, and every axis of the cell, the Pylons and the defect.
func TestCampaignReplayNamesTheCellAndDefect(t *testing.T) {
	o := campaignrun.Options{Pylons: 3, BadPylons: 1}
	o.Cell = matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.System, Discovery: matrix.EndpointSlice, Profile: matrix.Secure}
	got := campaignReplay(o, &runFlags{topology: "topologies/default.yaml"}, "stargate-keeps-lapsed-lease")
	dir, err := harnessrun.BinDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "harness")+" campaign --topology topologies/default.yaml --workload statefulset --trust system --discovery endpointslice --profile secure --pylons 3 --bad-pylons 1 --shrink=false --defect stargate-keeps-lapsed-lease", got)
}
