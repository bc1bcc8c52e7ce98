package reports

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A DetectionMatrix is what `harness selftest` proves: for every
// registered defect of the reference components, which scenarios turned
// red with it switched on, and for which reason, against a defect-free
// baseline of the same cases. It is plain data so that every report (the
// summary, JUnit, an HTML report) renders the same thing.
type DetectionMatrix struct {
	// Scenarios are the matrix's columns: every scenario some defect expects.
	Scenarios []string `json:"scenarios"`
	// Defects are the rows, in registry order.
	Defects []DefectRow `json:"defects"`
	// Baseline is the defect-free run of every case the rows ran: each must pass.
	Baseline []CaseResult `json:"baseline"`
	// WallTime is the whole selftest's duration, bring-up included.
	WallTime time.Duration `json:"wallTime,omitempty"`
}

// Verdicts of a defect row.
const (
	// Caught: an expected scenario turned red for an expected reason, and
	// no unrelated case did.
	Caught = "caught"
	// Gap: no expected scenario caught it; the row names the gap.
	Gap = "gap"
	// Noisy: caught, but an unrelated case turned red too.
	Noisy = "noisy"
	// Unjudged: the run gave no verdict (bring-up failed, baseline red, interrupted).
	Unjudged = "unjudged"
)

// DefectRow is one defect: what it is, and what its run observed.
type DefectRow struct {
	Name      string `json:"name"`
	Role      string `json:"role"`
	Epic      int    `json:"epic,omitempty"`
	Site      string `json:"site"`
	Recreates string `json:"recreates"`
	// Expected are the scenario IDs that should catch it; Reasons the
	// observed reasons that count (empty: any).
	Expected []string `json:"expected"`
	Reasons  []string `json:"reasons,omitempty"`
	// Cells maps a scenario ID to what its cases showed with the defect on.
	Cells map[string]Detection `json:"cells"`
	// Unrelated are the cases outside Expected that turned red.
	Unrelated []string `json:"unrelated,omitempty"`
	// Verdict is Caught, Gap, Noisy or Unjudged; Message says why.
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
	// Artifacts is the folder of the defect's run.
	Artifacts string        `json:"artifacts,omitempty"`
	Duration  time.Duration `json:"duration,omitempty"`
}

// Detection is one scenario's cases in one defect's run.
type Detection struct {
	// Red says at least one case of the scenario did not pass.
	Red bool `json:"red"`
	// Reasons are the observed reasons of its red cases ("accepted" for a
	// refusal that did not happen).
	Reasons []string `json:"reasons,omitempty"`
	// Cases are the names of its red cases.
	Cases []string `json:"cases,omitempty"`
	// Ran says the scenario had cases in the run.
	Ran bool `json:"ran"`
}

// AcceptedReason is the reason recorded for a fail-closed case that
// nothing refused.
const AcceptedReason = "accepted"

// redReason is the reason a red case shows in the matrix: the observed
// one, else "accepted" for a fail-closed case nothing refused, else its
// outcome ("error": it could not be judged, e.g. the cell did not deploy).
func redReason(r CaseResult) string {
	switch {
	case r.Observed != "":
		return r.Observed
	case r.Outcome == Fail && strings.HasPrefix(r.Expect, "fail-closed"):
		return AcceptedReason
	default:
		return string(r.Outcome)
	}
}

// Judge fills row's Cells, Unrelated, Verdict and Message from the
// defect run's results, given the baseline's results of the same plan.
func (row *DefectRow) Judge(results []CaseResult, baseline []CaseResult) {
	green := map[string]bool{}
	for _, b := range baseline {
		green[b.Name] = b.Outcome == Pass
	}
	row.Cells, row.Unrelated = map[string]Detection{}, nil
	for _, r := range results {
		d := row.Cells[r.ID]
		d.Ran = true
		if r.Outcome == Fail || r.Outcome == Error {
			why := redReason(r)
			if slices.Contains(row.Expected, r.ID) {
				d.Red = true
				d.Cases = append(d.Cases, r.Name)
				if !slices.Contains(d.Reasons, why) {
					d.Reasons = append(d.Reasons, why)
				}
			} else {
				row.Unrelated = append(row.Unrelated, r.Name+" ("+why+")")
			}
		}
		if slices.Contains(row.Expected, r.ID) {
			row.Cells[r.ID] = d
		}
	}
	var notGreen []string
	for _, r := range results {
		if ok, known := green[r.Name]; !known || !ok {
			notGreen = append(notGreen, r.Name)
		}
	}
	var caughtBy []string
	for _, id := range row.Expected {
		d := row.Cells[id]
		for _, why := range d.Reasons {
			if len(row.Reasons) == 0 || slices.Contains(row.Reasons, why) {
				caughtBy = append(caughtBy, id+" ("+why+")")
				break
			}
		}
	}
	switch {
	case len(results) == 0:
		row.Verdict, row.Message = Unjudged, "no case ran"
	case len(notGreen) > 0:
		row.Verdict, row.Message = Unjudged, "the defect-free baseline did not pass "+strings.Join(notGreen, ", ")
	case len(caughtBy) > 0 && len(row.Unrelated) == 0:
		row.Verdict, row.Message = Caught, "caught by "+strings.Join(caughtBy, ", ")
	case len(caughtBy) > 0:
		row.Verdict, row.Message = Noisy, "caught by "+strings.Join(caughtBy, ", ")+", but unrelated cases turned red: "+strings.Join(row.Unrelated, ", ")
	default:
		row.Verdict = Gap
		row.Message = fmt.Sprintf("GAP: no expected scenario (%s) turned red for an expected reason (%s)%s",
			strings.Join(row.Expected, ", "), orAny(row.Reasons), observedOf(row))
	}
}

func orAny(rs []string) string {
	if len(rs) == 0 {
		return "any"
	}
	return strings.Join(rs, "|")
}

func observedOf(row *DefectRow) string {
	var parts []string
	for _, id := range row.Expected {
		if d := row.Cells[id]; d.Red {
			parts = append(parts, id+": "+strings.Join(d.Reasons, "|"))
		}
	}
	if len(parts) == 0 {
		return "; every expected case stayed green"
	}
	return "; observed " + strings.Join(parts, ", ")
}

// OK reports whether every defect was caught and the baseline passed.
func (m DetectionMatrix) OK() bool {
	for _, b := range m.Baseline {
		if b.Outcome != Pass {
			return false
		}
	}
	for _, d := range m.Defects {
		if d.Verdict != Caught {
			return false
		}
	}
	return len(m.Defects) > 0
}

// Gaps are the rows that were not caught.
func (m DetectionMatrix) Gaps() []DefectRow {
	return slices.DeleteFunc(slices.Clone(m.Defects), func(d DefectRow) bool { return d.Verdict == Caught })
}

// cellMark renders one cell of the matrix.
func cellMark(row DefectRow, id string) string {
	if !slices.Contains(row.Expected, id) {
		return ""
	}
	d := row.Cells[id]
	switch {
	case !d.Ran:
		return "not run"
	case d.Red:
		return "RED (" + strings.Join(d.Reasons, "|") + ")"
	default:
		return "green"
	}
}

// Markdown writes the matrix as a table (defect × scenario), the verdicts
// with their messages, and the baseline.
func (m DetectionMatrix) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Detection matrix\n\n")
	fmt.Fprintf(&b, "Each row is a defect switched on in the reference components; each column a scenario. ")
	fmt.Fprintf(&b, "RED (reason) is a scenario its defect turned red, with the observed reason (`accepted`: a refusal that did not happen); ")
	fmt.Fprintf(&b, "blank means the defect does not expect that scenario. A defect is caught when an expected scenario turns red for an expected reason and no unrelated case does.\n\n")
	caught := len(m.Defects) - len(m.Gaps())
	fmt.Fprintf(&b, "**%d of %d defects caught**; baseline %s", caught, len(m.Defects), baselineText(m.Baseline))
	if m.WallTime > 0 {
		fmt.Fprintf(&b, "; wall time %s", m.WallTime.Round(time.Second))
	}
	fmt.Fprintf(&b, ".\n\n| defect | epic | verdict |")
	for _, s := range m.Scenarios {
		fmt.Fprintf(&b, " %s |", s)
	}
	fmt.Fprintf(&b, "\n|---|---|---|%s\n", strings.Repeat("---|", len(m.Scenarios)))
	for _, d := range m.Defects {
		epic := "-"
		if d.Epic > 0 {
			epic = fmt.Sprint(d.Epic)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", d.Name, epic, d.Verdict)
		for _, s := range m.Scenarios {
			fmt.Fprintf(&b, " %s |", cellMark(d, s))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n## Defects\n\n")
	for _, d := range m.Defects {
		fmt.Fprintf(&b, "- **%s** (%s, `%s`): %s. %s: %s\n", d.Name, d.Role, d.Site, d.Recreates, d.Verdict, oneLine(d.Message))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func baselineText(bs []CaseResult) string {
	var c Counts
	for _, r := range bs {
		c.add(r)
	}
	if c.Total() == 0 {
		return "not run"
	}
	state := "green"
	if c.Fail+c.Error > 0 {
		state = "RED"
	}
	return fmt.Sprintf("%s (%d pass, %d fail, %d error)", state, c.Pass, c.Fail, c.Error)
}

// Text writes one line per defect and the totals, for a terminal.
func (m DetectionMatrix) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "detection matrix: %d of %d defects caught; baseline %s\n", len(m.Defects)-len(m.Gaps()), len(m.Defects), baselineText(m.Baseline))
	for _, d := range m.Defects {
		fmt.Fprintf(&b, "  %-8s %-44s %s\n", d.Verdict, d.Name, oneLine(d.Message))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Detection report files, in the selftest's artifacts folder.
const (
	DetectionJSON  = "detection.json"
	DetectionMD    = "detection.md"
	DetectionJUnit = "junit.xml"
)

// Write writes detection.json, detection.md and junit.xml into dir.
func (m DetectionMatrix) Write(dir string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, DetectionJSON), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	_ = m.Markdown(&md)
	if err := os.WriteFile(filepath.Join(dir, DetectionMD), []byte(md.String()), 0o644); err != nil {
		return err
	}
	return m.WriteJUnit(filepath.Join(dir, DetectionJUnit))
}

type selftestSuites struct {
	XMLName xml.Name        `xml:"testsuites"`
	Suites  []selftestSuite `xml:"testsuite"`
}

type selftestSuite struct {
	Name     string         `xml:"name,attr"`
	Tests    int            `xml:"tests,attr"`
	Failures int            `xml:"failures,attr"`
	Time     string         `xml:"time,attr"`
	Cases    []selftestCase `xml:"testcase"`
}

type selftestCase struct {
	Name       string             `xml:"name,attr"`
	Classname  string             `xml:"classname,attr"`
	Time       string             `xml:"time,attr"`
	Properties []selftestProperty `xml:"properties>property,omitempty"`
	Failure    *selftestFailure   `xml:"failure,omitempty"`
	SystemOut  string             `xml:"system-out,omitempty"`
}

type selftestProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type selftestFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the matrix as JUnit: one testcase per defect, passing
// when it was caught, and one "baseline" testcase passing when every
// defect-free case passed.
func (m DetectionMatrix) WriteJUnit(path string) error {
	s := selftestSuite{Name: "selftest", Time: secs(m.WallTime)}
	base := selftestCase{Name: "baseline", Classname: "selftest", Time: "0"}
	var red []string
	for _, r := range m.Baseline {
		if r.Outcome != Pass {
			red = append(red, r.Name+": "+string(r.Outcome)+" "+r.Observed)
		}
	}
	if len(red) > 0 || len(m.Baseline) == 0 {
		base.Failure = &selftestFailure{Message: "the defect-free baseline is not green", Text: strings.Join(red, "\n")}
	}
	s.Cases = append(s.Cases, base)
	for _, d := range m.Defects {
		c := selftestCase{Name: d.Name, Classname: "selftest", Time: secs(d.Duration), Properties: []selftestProperty{
			{Name: "description", Value: d.Recreates},
			{Name: "role", Value: d.Role},
			{Name: "epic", Value: fmt.Sprint(d.Epic)},
			{Name: "site", Value: d.Site},
			{Name: "expected", Value: strings.Join(d.Expected, ",")},
		}}
		var out strings.Builder
		for _, id := range d.Expected {
			fmt.Fprintf(&out, "%s: %s\n", id, orDash(cellMark(d, id)))
		}
		c.SystemOut = out.String()
		if d.Verdict != Caught {
			c.Failure = &selftestFailure{Message: d.Verdict + ": " + oneLine(d.Message), Text: c.SystemOut}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	for _, c := range s.Cases {
		if c.Failure != nil {
			s.Failures++
		}
	}
	data, err := xml.MarshalIndent(selftestSuites{Suites: []selftestSuite{s}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(data, '\n')...), 0o644)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// ReadDetection reads dir/detection.json; nil, nil when there is none, so
// a run's reports include a selftest's matrix when it is there.
func ReadDetection(dir string) (*DetectionMatrix, error) {
	data, err := os.ReadFile(filepath.Join(dir, DetectionJSON))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m DetectionMatrix
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("detection matrix %s: %w", filepath.Join(dir, DetectionJSON), err)
	}
	return &m, nil
}
