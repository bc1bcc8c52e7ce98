package reports

import (
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JUnit property names. A testcase carries them for its case; the
// testsuite carries the run's.
const (
	PropLayer       = "layer"
	PropScenario    = "scenario"
	PropCell        = "cell"
	PropKind        = "kind"
	PropDescription = "description"
	PropExpectation = "expectation"
	PropControl     = "control"
	PropObserved    = "observed-reason"
	PropFaults      = "faults-active"
	PropProof       = "server-side-proof"
	PropEvidence    = "evidence"
	PropDuration    = "duration"
	PropAttempt     = "attempt"
	PropFlaky       = "flaky"
	PropCovers      = "requirements"
	PropRepro       = "repro"
	PropQuarantine  = "quarantined"
)

// The JUnit XML shapes, shared with the campaign's report.

// JUnitProperty is a <property>.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitProblem is a <failure>, <error> or <skipped>.
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnitCase is a <testcase>.
type JUnitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Failure    *JUnitProblem   `xml:"failure,omitempty"`
	Error      *JUnitProblem   `xml:"error,omitempty"`
	Skipped    *JUnitProblem   `xml:"skipped,omitempty"`
	// FlakyFailures are the failed attempts of a case that passed on a
	// rerun (the convention of Maven's surefire reports).
	FlakyFailures []JUnitProblem `xml:"flakyFailure,omitempty"`
	SystemOut     string         `xml:"system-out,omitempty"`
}

// JUnitSuite is a <testsuite>.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitSuites is the <testsuites> document.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// SuiteName names the run's testsuite in JUnit.
const SuiteName = "nvcf-conformance"

// JUnit renders the run as JUnit XML: one testsuite, one testcase per
// planned case (named like the test, classname its layer), with the case's
// properties. A case that failed its expectation is a <failure>; one that
// could not be judged (its control failed, its cell did not deploy, it never
// ran) is an <error>; a flaky case passes and keeps its failed attempts as
// <flakyFailure>. The suite's properties describe the run (commit, topology
// hash, provider, images and digests, component versions, time scale) and
// its totals (planned, passed, failed, errored, flaky, not run).
func (r Run) JUnit() ([]byte, error) {
	s := r.Summary()
	var total time.Duration
	suite := JUnitSuite{Name: SuiteName, Properties: r.runProperties(s)}
	if !r.Meta.Start.IsZero() {
		suite.Timestamp = r.Meta.Start.UTC().Format(time.RFC3339)
	}
	for _, c := range r.Cases {
		total += c.Duration
		jc := r.JUnitCase(c)
		switch {
		case jc.Failure != nil:
			suite.Failures++
		case jc.Error != nil:
			suite.Errors++
		case jc.Skipped != nil:
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	wall := r.Meta.WallTime
	if wall == 0 {
		wall = total
	}
	suite.Time = seconds(total)
	doc := JUnitSuites{Name: SuiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: seconds(wall), Suites: []JUnitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render JUnit: %w", err)
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func (r Run) runProperties(s Summary) []JUnitProperty {
	m := r.Meta
	var ps []JUnitProperty
	add := func(name, value string) {
		if value != "" {
			ps = append(ps, JUnitProperty{name, value})
		}
	}
	add("commit", m.Commit)
	add("version", m.Version)
	add("topology", m.Topology)
	add("topology-hash", m.TopologyHash)
	add("provider", m.Provider)
	for _, im := range m.Images {
		add("image."+im.Component, im.Ref)
		add("image."+im.Component+".digest", im.Digest)
	}
	for _, k := range sortedKeys(m.Components) {
		add("version."+k, m.Components[k])
	}
	if m.TimeScale > 0 {
		add("time-scale", strconv.FormatFloat(m.TimeScale, 'g', -1, 64))
	}
	if m.Parallel > 0 {
		add("parallel", strconv.Itoa(m.Parallel))
	}
	if m.Environments > 0 {
		add("environments", strconv.Itoa(m.Environments))
	}
	add("reruns", strconv.Itoa(m.Reruns))
	for _, k := range sortedKeys(m.Filters) {
		add("filter."+k, m.Filters[k])
	}
	t := s.Total
	for _, p := range []struct {
		name string
		n    int
	}{{"planned", t.Total()}, {"passed", t.Pass}, {"failed", t.Fail}, {"errored", t.Error}, {"flaky", t.Flaky}, {"skipped", t.Skip}, {"not-run", t.NotRun}} {
		add(p.name, strconv.Itoa(p.n))
	}
	add("interrupted", s.Interruption())
	if r.Gate != nil {
		add("gate", r.Gate.Line())
	}
	return ps
}

func (r Run) JUnitCase(c CaseResult) JUnitCase {
	jc := JUnitCase{Name: c.Name, Classname: c.Layer, Time: seconds(c.Duration)}
	add := func(name, value string) {
		if value != "" {
			jc.Properties = append(jc.Properties, JUnitProperty{name, value})
		}
	}
	add(PropLayer, c.Layer)
	add(PropScenario, c.ID)
	add(PropCell, c.Cell)
	add(PropKind, c.Kind)
	add(PropDescription, c.Description)
	add(PropExpectation, c.Expect)
	add(PropControl, c.Control)
	add(PropObserved, c.Observed)
	add(PropFaults, strings.Join(c.Faults, "; "))
	add(PropProof, strings.Join(c.Proof, "; "))
	add(PropEvidence, c.Evidence)
	add(PropDuration, c.Duration.Round(time.Millisecond).String())
	add(PropAttempt, strconv.Itoa(c.Tries()))
	if c.Outcome == Flaky {
		add(PropFlaky, "true")
	}
	add(PropCovers, strings.Join(c.Covers, ","))
	add(PropRepro, c.Repro)
	if q, ok := r.Gate.quarantineOf(c.Name); ok {
		add(PropQuarantine, q.String())
	}
	problem := &JUnitProblem{Message: firstLine(c.Message), Type: c.Observed, Text: c.Message}
	switch c.Outcome {
	case Fail:
		jc.Failure = problem
	case Error:
		if c.NotRunYet() {
			problem.Type = NotRun
		}
		jc.Error = problem
	case Skip:
		jc.Skipped = &JUnitProblem{Message: firstLine(c.Message)}
	case Flaky:
		for _, a := range c.Earlier {
			jc.FlakyFailures = append(jc.FlakyFailures, JUnitProblem{
				Message: fmt.Sprintf("attempt %d: %s", a.Attempt, firstLine(a.Message)), Type: a.Observed, Text: a.Message})
		}
	}
	if c.Outcome != Pass {
		jc.SystemOut = "evidence: " + c.Evidence + "\n"
		if c.Repro != "" {
			jc.SystemOut += "repro: " + c.Repro + "\n"
		}
	}
	return jc
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
