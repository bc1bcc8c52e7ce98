package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/reports"
)

// recorded copies the recorded run (one failing, one flaky and one
// quarantined case) into a fresh artifacts folder.
func recorded(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../reports/testdata/recorded")))
	return dir
}

// TestGateExitCodes: `harness gate` on the recorded run blocks (exit 1)
// for the failing and the flaky case, not for the quarantined one; writes
// its verdict into junit.xml and report.html; and exits 2 when it cannot
// judge at all.
func TestGateExitCodes(t *testing.T) {
	art := recorded(t)
	gate := filepath.Join(art, "gate.yaml")
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"gate", "--file", gate, "--artifacts", art, "--date", "2026-12-03"}, &out, &errs)
	require.Equal(t, 1, exitCode(err), "%v\n%s", err, out.String())
	text := out.String()
	require.Contains(t, text, "BLOCK failed             tls/wrong-root[workload=statefulset,trust=system]")
	require.Contains(t, text, "BLOCK flaky              quic/tunnel-up[workload=statefulset,trust=system]")
	require.Contains(t, text, "note  quarantined        resilience/quic-loss-delay[workload=statefulset,trust=system]")
	require.Contains(t, text, "more required cases missing from the run", "the recorded run covers one cell of the matrix")

	junit, err := os.ReadFile(filepath.Join(art, reports.JUnitFile))
	require.NoError(t, err)
	require.Contains(t, string(junit), `<property name="quarantined" value="owner=resilience-team; expires=2099-12-31;`)
	page, err := os.ReadFile(filepath.Join(art, reports.HTMLFile))
	require.NoError(t, err)
	require.Contains(t, string(page), `id="gate"`)

	// The day after the quarantine's expiry, it blocks too.
	out.Reset()
	err = run(context.Background(), []string{"gate", "--file", gate, "--artifacts", art, "--date", "2100-01-01"}, &out, &errs)
	require.Equal(t, 1, exitCode(err))
	require.Contains(t, out.String(), "BLOCK quarantine-expired resilience/quic-loss-delay")

	// No verdict: a gate naming a cell the matrix lacks, or no run report.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("required: {cells: [\"workload=daemonset,trust=system\"]}\n"), 0o644))
	err = run(context.Background(), []string{"gate", "--file", bad, "--artifacts", art}, &out, &errs)
	require.Equal(t, 2, exitCode(err))
	require.ErrorContains(t, err, `required cell "workload=daemonset,trust=system" is not a cell of the matrix`)
	err = run(context.Background(), []string{"gate", "--file", gate, "--artifacts", t.TempDir()}, &out, &errs)
	require.Equal(t, 2, exitCode(err))
	require.ErrorContains(t, err, "no run report")
}

func TestReportDiff(t *testing.T) {
	old, cur := recorded(t), recorded(t)
	r, err := reports.ReadRun(cur)
	require.NoError(t, err)
	for i := range r.Cases {
		if strings.HasPrefix(r.Cases[i].Name, "tls/wrong-root[") {
			r.Cases[i].Outcome, r.Cases[i].Message = reports.Pass, ""
		}
	}
	require.NoError(t, r.Write(cur))
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"report", "diff", old, cur}, &out, &out))
	require.Contains(t, out.String(), "fixed: 1\n  tls/wrong-root[workload=statefulset,trust=system] (fail -> pass)")
	require.Contains(t, out.String(), "newly failing: 0")
	require.Error(t, run(context.Background(), []string{"report", "diff", old}, &out, &out))
}
