package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sample(dir string) []CaseResult {
	mk := func(name, id, layer, cell, kind string, o Outcome, msg string) CaseResult {
		return CaseResult{Name: name, ID: id, Layer: layer, Cell: cell, Kind: kind, Expect: "pass", Outcome: o, Message: msg,
			Description: "what " + id + " shows",
			Evidence:    EvidenceDir(dir, name), Start: time.Unix(0, 0), Duration: time.Second}
	}
	return []CaseResult{
		mk("tls/wrong-root[workload=deployment,trust=bundle]", "tls/wrong-root", "tls", "workload=deployment,trust=bundle", "case", Pass, ""),
		mk("tls/wrong-root/with-control-config[workload=deployment,trust=bundle]", "tls/wrong-root", "tls", "workload=deployment,trust=bundle", "control-config", Fail, "still refused"),
		mk("quic/bad-token[workload=mixed,trust=system]", "quic/bad-token", "quic", "workload=mixed,trust=system", "case", Error, "positive control quic/tunnel-up failed"),
		mk("authority/missing[workload=mixed,trust=system]", "authority/missing", "authority", "workload=mixed,trust=system", "case", Pass, ""),
	}
}

func TestEvidenceDirIsAFolderName(t *testing.T) {
	require.Equal(t, filepath.Join("/a", "cases", "tls_wrong-root_workload=deployment,trust=bundle_"),
		EvidenceDir("/a", "tls/wrong-root[workload=deployment,trust=bundle]"))
}

func TestWriteAndLoadCases(t *testing.T) {
	dir := t.TempDir()
	in := sample(dir)
	for _, r := range in {
		require.NoError(t, WriteCase(r))
	}
	out, err := LoadCases(dir)
	require.NoError(t, err)
	require.Len(t, out, len(in))
	require.Equal(t, "authority/missing[workload=mixed,trust=system]", out[0].Name, "sorted by name")
	require.Equal(t, Error, out[1].Outcome)

	empty, err := LoadCases(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, empty)
	require.Error(t, WriteCase(CaseResult{Name: "x"}))
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	s := Summarize(sample(dir), []string{"tls", "authority", "quic"})
	require.Equal(t, []string{"tls", "authority", "quic"}, s.Layers)
	require.Equal(t, Counts{Pass: 1, Fail: 1}, s.PerLayer["tls"])
	require.Equal(t, Counts{Error: 1}, s.PerLayer["quic"])
	require.Equal(t, 4, s.Total.Total())
	require.False(t, s.OK())
	require.Len(t, s.Failures, 2)
	require.Equal(t, "tls/wrong-root", s.Rows[0].ID, "rows follow the layer order")

	var md bytes.Buffer
	require.NoError(t, s.Markdown(&md))
	require.Contains(t, md.String(), "| tls | 2 | 1 | 1 | 0 | 0 |")
	require.Contains(t, md.String(), "ok (control-config FAIL)")
	require.Contains(t, md.String(), "| quic/bad-token | pass | · | ERROR | what quic/bad-token shows |")
	require.Contains(t, md.String(), "| scenario | expect | workload=deployment,trust=bundle | workload=mixed,trust=system | description |\n|---|---|---|---|---|\n")
	require.Equal(t, "what tls/wrong-root shows", s.Rows[0].Description)
	require.Contains(t, md.String(), EvidenceDir(dir, "quic/bad-token[workload=mixed,trust=system]"))

	var txt bytes.Buffer
	require.NoError(t, s.Text(&txt))
	require.Contains(t, txt.String(), "ERROR quic/bad-token[workload=mixed,trust=system]: positive control quic/tunnel-up failed")

	require.NoError(t, s.Write(dir))
	for _, f := range []string{"summary.md", "summary.json"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
	}
	require.True(t, Summarize(sample(dir)[:1], nil).OK())
}

// TestCutShortIsNoVerdict: a failure or error that ended after the cut
// becomes an interrupted error keeping its own verdict in the message;
// what ended before the cut, passes and not-run cases keep theirs.
func TestCutShortIsNoVerdict(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	before, after := at.Add(-time.Minute), at.Add(-time.Second)
	in := []CaseResult{
		{Name: "failed-before", Outcome: Fail, Observed: "unknown", Start: before, Duration: 30 * time.Second},
		{Name: "failed-after", Outcome: Fail, Observed: "unknown", Message: "context canceled", Start: after, Duration: 2 * time.Second},
		{Name: "error-at", Outcome: Error, Start: after, Duration: time.Second},
		{Name: "passed-after", Outcome: Pass, Start: after, Duration: 2 * time.Second},
		{Name: "not-run", Outcome: Error, Observed: NotRun},
	}
	out, n := CutShort(in, at, "the interrupt")
	require.Equal(t, 2, n)
	require.Equal(t, Fail, out[0].Outcome, "a failure that ended before the cut is a verdict")
	for _, r := range out[1:3] {
		require.Equal(t, Error, r.Outcome, r.Name)
		require.Equal(t, Interrupted, r.Observed, r.Name)
	}
	require.Contains(t, out[1].Message, "cut short by the interrupt at 2026-01-02T03:04:05Z; no verdict (it ended as fail (unknown): context canceled)")
	require.Equal(t, Pass, out[3].Outcome)
	require.Equal(t, NotRun, out[4].Observed)
	require.Equal(t, Fail, in[1].Outcome, "the input is left alone")
}

func TestWithNotRunTotalsThePlan(t *testing.T) {
	done := []CaseResult{{Name: "a[c]", ID: "a", Layer: "tls", Cell: "c", Kind: "case", Outcome: Pass}}
	planned := []CaseResult{
		{Name: "a[c]", ID: "a", Layer: "tls", Cell: "c", Kind: "case"},
		{Name: "b[c]", ID: "b", Layer: "quic", Cell: "c", Kind: "case", Expect: "pass"},
	}
	all, missing := WithNotRun(done, planned)
	require.Equal(t, 1, missing)
	require.Len(t, all, 2)
	require.Equal(t, Error, all[1].Outcome)
	require.Equal(t, NotRun, all[1].Observed)
	s := Summarize(all, []string{"tls", "quic"})
	require.Equal(t, 2, s.Total.Total())
	require.Equal(t, 1, s.Total.NotRun, "a case that never ran is counted as not run")
	require.Zero(t, s.Total.Error, "…and not among the errors")
	require.False(t, s.OK())
	require.Equal(t, "interrupted after 1 of 2 planned cases; 1 never ran", s.Interruption())
	var txt bytes.Buffer
	require.NoError(t, s.Text(&txt))
	require.Contains(t, txt.String(), "2 planned:   1 pass   0 fail   0 error   0 flaky   0 skip   1 not run")
	require.Contains(t, txt.String(), "run interrupted after 1 of 2 planned cases; 1 never ran")
	data, err := Run{Cases: all}.JUnit()
	require.NoError(t, err)
	require.Contains(t, string(data), `<property name="not-run" value="1">`)
	require.Contains(t, string(data), `<error message="not run: the run ended before this case`)
}
