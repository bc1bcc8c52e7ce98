package reports

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordedRun copies testdata/recorded (a run with one failing, one flaky
// and one quarantined case) into a fresh folder and returns the folder and
// the run, with its evidence paths made absolute as a real run writes them.
func recordedRun(t *testing.T) (string, Run) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/recorded")))
	r, err := ReadRun(dir)
	require.NoError(t, err)
	for i := range r.Cases {
		r.Cases[i].Evidence = filepath.Join(dir, r.Cases[i].Evidence)
		for j := range r.Cases[i].Earlier {
			r.Cases[i].Earlier[j].Evidence = filepath.Join(dir, r.Cases[i].Earlier[j].Evidence)
		}
	}
	return dir, r
}

type xmlProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
}

type xmlCase struct {
	Name   string       `xml:"name,attr"`
	Class  string       `xml:"classname,attr"`
	Props  []xmlProp    `xml:"properties>property"`
	Fail   *xmlProblem  `xml:"failure"`
	Err    *xmlProblem  `xml:"error"`
	Flakes []xmlProblem `xml:"flakyFailure"`
	Out    string       `xml:"system-out"`
}

type xmlReport struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Props []xmlProp `xml:"properties>property"`
		Cases []xmlCase `xml:"testcase"`
	} `xml:"testsuite"`
}

func props(ps []xmlProp) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

func parseJUnit(t *testing.T, data []byte) (xmlReport, map[string]xmlCase) {
	t.Helper()
	var rep xmlReport
	require.NoError(t, xml.Unmarshal(data, &rep), string(data))
	require.Len(t, rep.Suites, 1)
	cases := map[string]xmlCase{}
	for _, c := range rep.Suites[0].Cases {
		cases[c.Name] = c
	}
	return rep, cases
}

const inCell = "[workload=statefulset,trust=system]"

func TestRecordedRunJUnit(t *testing.T) {
	dir, r := recordedRun(t)
	data, err := r.JUnit()
	require.NoError(t, err)
	rep, cases := parseJUnit(t, data)
	require.Equal(t, 5, rep.Tests, "one testcase per case, no step testcases")
	require.Equal(t, 1, rep.Failures, "the wrong-reason refusal is a failure")
	require.Equal(t, 1, rep.Errors, "the broken control is an error, kept apart from failures")

	run := props(rep.Suites[0].Props)
	for k, v := range map[string]string{
		"commit": "0123456789abcdef0123456789abcdef01234567", "topology-hash": "sha256:3f2a9c1b7e4d", "provider": "local",
		"image.stargate": "nvcf-ref:dev", "image.stargate.digest": "sha256:aaaa", "version.kubernetes": "v1.37.2",
		"time-scale": "1.5", "reruns": "2", "planned": "5", "passed": "2", "failed": "1", "errored": "1", "flaky": "1", "not-run": "0",
	} {
		require.Equal(t, v, run[k], "run property %s", k)
	}

	failed := cases["tls/wrong-root"+inCell]
	require.NotNil(t, failed.Fail)
	require.Nil(t, failed.Err)
	require.Equal(t, "hostname-mismatch", failed.Fail.Type)
	p := props(failed.Props)
	for k, v := range map[string]string{
		PropLayer: "tls", PropScenario: "tls/wrong-root", PropCell: "workload=statefulset,trust=system",
		PropExpectation: "fail-closed(unknown-authority)", PropObserved: "hostname-mismatch", PropAttempt: "1",
		PropDuration: "2.5s", PropCovers: "dod-7", PropControl: "tls/verified-watch",
		PropEvidence: EvidenceDir(dir, "tls/wrong-root"+inCell),
	} {
		require.Equal(t, v, p[k], "property %s", k)
	}
	require.Contains(t, p[PropRepro], "--run '^tls/wrong-root$' --workload statefulset --trust system --keep")
	require.Contains(t, failed.Out, "repro: harness run")

	flaky := cases["quic/tunnel-up"+inCell]
	require.Nil(t, flaky.Fail, "a flaky case is not a failure")
	require.Nil(t, flaky.Err)
	require.Equal(t, "true", props(flaky.Props)[PropFlaky])
	require.Equal(t, "2", props(flaky.Props)[PropAttempt])
	require.Len(t, flaky.Flakes, 1)
	require.Contains(t, flaky.Flakes[0].Message, "attempt 1")

	errored := cases["resilience/quic-loss-delay"+inCell]
	require.NotNil(t, errored.Err)
	require.Nil(t, errored.Fail)
	require.Contains(t, props(errored.Props)[PropFaults], "quic loss and delay")
	require.Empty(t, props(errored.Props)[PropQuarantine], "no gate applied yet")
}

func TestRecordedRunGate(t *testing.T) {
	_, r := recordedRun(t)
	g, err := LoadGate("testdata/recorded/gate.yaml")
	require.NoError(t, err)
	today := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

	v := g.Evaluate(r, "gate.yaml", nil, today)
	require.False(t, v.Pass)
	blocking := map[string]string{}
	for _, f := range v.Blocking() {
		blocking[f.Case] = f.Kind
	}
	require.Equal(t, map[string]string{"tls/wrong-root" + inCell: "failed", "quic/tunnel-up" + inCell: "flaky"}, blocking)
	var quarantined []string
	for _, f := range v.Findings {
		if f.Kind == "quarantined" {
			require.False(t, f.Blocking)
			quarantined = append(quarantined, f.Case)
		}
	}
	require.Equal(t, []string{"resilience/quic-loss-delay" + inCell}, quarantined)

	// The quarantine shows in JUnit once the gate is applied.
	r.Gate = v
	data, err := r.JUnit()
	require.NoError(t, err)
	rep, cases := parseJUnit(t, data)
	require.Contains(t, props(cases["resilience/quic-loss-delay"+inCell].Props)[PropQuarantine], "owner=resilience-team; expires=2099-12-31")
	require.Contains(t, props(rep.Suites[0].Props)["gate"], "FAIL")

	// Flaky allowed and the failure quarantined: the gate passes.
	g2 := *g
	g2.Flaky = "allow"
	g2.Quarantine = append(g2.Quarantine, Quarantine{Case: "tls/wrong-root" + inCell, Owner: "tls-team", Reason: "known", Expires: "2026-12-03"})
	require.True(t, g2.Evaluate(r, "g2", nil, today).Pass, "%s", g2.Evaluate(r, "g2", nil, today).Text())
	// The day after its expiry, the quarantine fails the gate on its own.
	expired := g2.Evaluate(r, "g2", nil, today.AddDate(0, 0, 1))
	require.False(t, expired.Pass)
	var kinds []string
	for _, f := range expired.Blocking() {
		kinds = append(kinds, f.Kind+" "+f.Case)
	}
	require.Contains(t, kinds, "quarantine-expired tls/wrong-root"+inCell)
	require.Contains(t, kinds, "failed tls/wrong-root"+inCell)

	// A required case missing from the run blocks.
	missing := g2.Evaluate(r, "g2", []string{"authority/missing" + inCell}, today)
	require.False(t, missing.Pass)
	require.Equal(t, "missing", missing.Blocking()[0].Kind)
}

func TestGateFileIsChecked(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"required: {cells: [x]}\nquarantine:\n- case: a\n  owner: o\n  expires: '2026-01-01'\n":  "lacks reason",
		"required: {cells: [x]}\nquarantine:\n- {case: a, owner: o, reason: r, expires: soon}\n": `expires "soon" is not a date`,
		"flaky: sometimes\nrequired: {cells: [x]}\n":                                             "neither block nor allow",
		"required: {}\n":          "requires nothing",
		"required: {cels: [x]}\n": "unknown field",
	} {
		p := filepath.Join(dir, "gate.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := LoadGate(p)
		require.ErrorContains(t, err, want, body)
	}
	_, err := LoadGate(filepath.Join(dir, "none.yaml"))
	require.Error(t, err)
}

func TestDiff(t *testing.T) {
	_, old := recordedRun(t)
	_, cur := recordedRun(t)
	byName := func(r Run, name string) *CaseResult {
		for i := range r.Cases {
			if r.Cases[i].Name == name {
				return &r.Cases[i]
			}
		}
		t.Fatalf("no case %s", name)
		return nil
	}
	byName(cur, "tls/wrong-root"+inCell).Outcome = Pass
	byName(cur, "tls/verified-watch"+inCell).Outcome = Fail
	byName(old, "quic/tunnel-up"+inCell).Outcome = Pass
	d := Compare(old, cur)
	require.Equal(t, []string{"tls/verified-watch" + inCell}, names(d.NewlyFailing))
	require.Equal(t, []string{"tls/wrong-root" + inCell}, names(d.Fixed))
	require.Equal(t, []string{"quic/tunnel-up" + inCell}, names(d.NewlyFlaky))
	require.True(t, Compare(cur, cur).Empty())
	var b strings.Builder
	require.NoError(t, d.Text(&b))
	require.Contains(t, b.String(), "newly failing: 1\n  tls/verified-watch"+inCell+" (pass -> fail)")
}

func names(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestRunWriteAndRead(t *testing.T) {
	dir, r := recordedRun(t)
	require.NoError(t, r.Write(dir))
	for _, f := range []string{ReportFile, JUnitFile, HTMLFile, "summary.md", "summary.json"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
	back, err := ReadRun(dir)
	require.NoError(t, err)
	require.Equal(t, r.Cases, back.Cases)
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "Total: 5 planned: 2 passed, 1 failed, 1 errors, 1 flaky, 0 skipped, 0 not run.")
	require.Contains(t, string(md), "repro: `harness run")
	_, err = ReadRun(t.TempDir())
	require.ErrorContains(t, err, "no run report")
}
