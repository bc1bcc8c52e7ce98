package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func cr(name, id string, o Outcome, observed string) CaseResult {
	return CaseResult{Name: name, ID: id, Outcome: o, Observed: observed, Expect: "fail-closed(x)"}
}

func TestJudge(t *testing.T) {
	base := []CaseResult{cr("a/x[c]", "a/x", Pass, ""), cr("a/y[c]", "a/y", Pass, ""), cr("b/z[c]", "b/z", Pass, "")}
	row := func(reasons ...string) DefectRow {
		return DefectRow{Name: "d", Expected: []string{"a/x", "a/y"}, Reasons: reasons}
	}
	// Caught: an expected scenario red for an expected reason.
	r := row("unknown-authority")
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "unknown-authority"), cr("a/y[c]", "a/y", Pass, "")}, base)
	require.Equal(t, Caught, r.Verdict, r.Message)
	require.True(t, r.Cells["a/x"].Red)
	require.False(t, r.Cells["a/y"].Red)
	// A fail-closed case that nothing refused reads as "accepted".
	r = row(AcceptedReason)
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "")}, base)
	require.Equal(t, Caught, r.Verdict, r.Message)
	// A case that could not be judged shows as "error", never as accepted.
	r = row(AcceptedReason)
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Error, "")}, base)
	require.Equal(t, Gap, r.Verdict)
	require.Equal(t, []string{"error"}, r.Cells["a/x"].Reasons)
	// Red for another reason only: a gap, named.
	r = row("unknown-authority")
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "timeout"), cr("a/y[c]", "a/y", Pass, "")}, base)
	require.Equal(t, Gap, r.Verdict)
	require.Contains(t, r.Message, "GAP")
	require.Contains(t, r.Message, "a/x: timeout")
	// Everything green: a gap.
	r = row()
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Pass, "")}, base)
	require.Equal(t, Gap, r.Verdict)
	require.Contains(t, r.Message, "stayed green")
	// Caught, but an unrelated case turned red.
	r = row()
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "x"), cr("b/z[c]", "b/z", Error, "y")}, base)
	require.Equal(t, Noisy, r.Verdict)
	require.Equal(t, []string{"b/z[c] (y)"}, r.Unrelated)
	// A red or missing baseline gives no verdict.
	r = row()
	r.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "x")}, []CaseResult{cr("a/x[c]", "a/x", Fail, "x")})
	require.Equal(t, Unjudged, r.Verdict)
	r = row()
	r.Judge(nil, base)
	require.Equal(t, Unjudged, r.Verdict)
}

func TestDetectionMatrixReports(t *testing.T) {
	base := []CaseResult{cr("a/x[c]", "a/x", Pass, "")}
	caught := DefectRow{Name: "caught-one", Role: "pylon", Epic: 1, Site: "pylon.dial", Recreates: "r1", Expected: []string{"a/x"}}
	caught.Judge([]CaseResult{cr("a/x[c]", "a/x", Fail, "plaintext-to-tls")}, base)
	gap := DefectRow{Name: "missed-one", Role: "router", Site: "router.Pick", Recreates: "r2", Expected: []string{"a/x"}}
	gap.Judge([]CaseResult{cr("a/x[c]", "a/x", Pass, "")}, base)
	m := DetectionMatrix{Scenarios: []string{"a/x"}, Defects: []DefectRow{caught, gap}, Baseline: base}
	require.False(t, m.OK())
	require.Len(t, m.Gaps(), 1)
	dir := t.TempDir()
	require.NoError(t, m.Write(dir))
	md, err := os.ReadFile(filepath.Join(dir, DetectionMD))
	require.NoError(t, err)
	require.Contains(t, string(md), "| caught-one | 1 | caught | RED (plaintext-to-tls) |")
	require.Contains(t, string(md), "| missed-one | - | gap | green |")
	data, err := os.ReadFile(filepath.Join(dir, DetectionJUnit))
	require.NoError(t, err)
	var doc selftestSuites
	require.NoError(t, xml.Unmarshal(data, &doc))
	s := doc.Suites[0]
	require.Equal(t, 3, s.Tests)
	require.Equal(t, 1, s.Failures)
	require.Equal(t, "baseline", s.Cases[0].Name)
	require.Nil(t, s.Cases[0].Failure)
	require.Nil(t, s.Cases[1].Failure)
	require.NotNil(t, s.Cases[2].Failure)
	require.True(t, strings.HasPrefix(s.Cases[2].Failure.Message, "gap: GAP"))
	m.Defects = m.Defects[:1]
	require.True(t, m.OK())
}
