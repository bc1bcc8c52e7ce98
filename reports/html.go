package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

//go:embed templates/report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur": func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() },
	"pct": func(f float64) string { return fmt.Sprintf("%.1f%%", f) },
}).Parse(reportTemplate))

// HTML renders the run as one self-contained HTML page (no network, no
// other file): the matrix grid coloured by outcome with filters by layer,
// cell and outcome, each case's steps, reason, fault timeline, repro
// command and evidence links, the requirement view, the detection matrix
// when there is one, the gate's verdict and the run's metadata. Evidence
// links are relative to dir, where the page is written.
func (r Run) HTML(dir string) ([]byte, error) {
	var b bytes.Buffer
	if err := reportPage.Execute(&b, r.view(dir)); err != nil {
		return nil, fmt.Errorf("render HTML report: %w", err)
	}
	return b.Bytes(), nil
}

type pageView struct {
	Run          Run
	Summary      Summary
	Interrupted  string
	Outcomes     []string
	Grid         []gridRow
	Cases        []caseView
	Requirements []requirementView
	Detection    *detectionView
	Generated    string
}

type gridRow struct {
	ID, Layer, Expect, Description string
	Cells                          []gridCell
}

type gridCell struct {
	Cell    string
	Name    string // "" when the scenario has no case in the cell
	Anchor  string
	Outcome string
	Extra   string // the control-config test's outcome when it did not pass
	// Quarantined: the gate quarantines the case.
	Quarantined bool
}

type caseView struct {
	CaseResult
	Anchor      string
	Label       string
	Quarantine  string
	Faults      []faultView
	Files       []link
	EarlierRuns []attemptView
}

type attemptView struct {
	Attempt
	Files []link
}

type faultView struct {
	Text        string
	Left, Width float64 // percent of the case's duration; Width 0 when the times are unknown
}

type link struct{ Href, Text string }

type requirementView struct {
	Requirement
	Scenarios []requirementScenario
	Verdict   string
}

type requirementScenario struct {
	ID     string
	Counts Counts
}

type detectionView struct {
	Scenarios []string
	Rows      []detectionRow
}

type detectionRow struct {
	DefectRow
	Cells []detectionCell
}

// detectionCell is one scenario's cases in one defect's run: Class is
// "pass" when it caught the defect, "fail" when it ran and stayed green,
// "none" when it did not run.
type detectionCell struct {
	Class, Text string
}

func (r Run) view(dir string) pageView {
	s := r.Summary()
	v := pageView{Run: r, Summary: s, Interrupted: s.Interruption(), Generated: time.Now().UTC().Format(time.RFC3339)}
	for _, o := range []Outcome{Pass, Fail, Error, Flaky, Skip} {
		v.Outcomes = append(v.Outcomes, string(o))
	}
	v.Outcomes = append(v.Outcomes, "not-run")
	byName := map[string]CaseResult{}
	for _, c := range r.Cases {
		byName[c.Name] = c
	}
	for _, row := range s.Rows {
		gr := gridRow{ID: row.ID, Layer: row.Layer, Expect: row.Expect, Description: row.Description}
		for _, cell := range s.Cells {
			gc := gridCell{Cell: cell}
			if _, ok := row.Cells[cell]; ok {
				gc.Name = row.ID + "[" + cell + "]"
				gc.Anchor = anchor(gc.Name)
				gc.Outcome = outcomeClass(byName[gc.Name])
				_, gc.Quarantined = r.Gate.quarantineOf(gc.Name)
				if cc, bad := row.Cells[cell+"+control-config"]; bad {
					gc.Extra = string(cc)
				}
			}
			gr.Cells = append(gr.Cells, gc)
		}
		v.Grid = append(v.Grid, gr)
	}
	for _, c := range r.Cases {
		cv := caseView{CaseResult: c, Anchor: anchor(c.Name), Label: outcomeClass(c), Files: evidenceLinks(dir, c.Evidence)}
		if q, ok := r.Gate.quarantineOf(c.Name); ok {
			cv.Quarantine = q.String()
		}
		for _, f := range c.Faults {
			cv.Faults = append(cv.Faults, faultSpan(f, c.Start, c.Duration))
		}
		for _, a := range c.Earlier {
			cv.EarlierRuns = append(cv.EarlierRuns, attemptView{Attempt: a, Files: evidenceLinks(dir, a.Evidence)})
		}
		v.Cases = append(v.Cases, cv)
	}
	for _, req := range r.Requirements {
		rv := requirementView{Requirement: req, Verdict: "not covered by this run"}
		per := map[string]*Counts{}
		var order []string
		for _, c := range r.Cases {
			if !slices.Contains(c.Covers, req.ID) {
				continue
			}
			if per[c.ID] == nil {
				per[c.ID] = &Counts{}
				order = append(order, c.ID)
			}
			per[c.ID].add(c)
		}
		var all Counts
		for _, id := range order {
			rv.Scenarios = append(rv.Scenarios, requirementScenario{ID: id, Counts: *per[id]})
			all.add2(*per[id])
		}
		if all.Total() > 0 {
			rv.Verdict = "met in this run"
			if all.Fail+all.Error+all.NotRun > 0 {
				rv.Verdict = "NOT met: " + all.Line()
			} else if all.Flaky > 0 {
				rv.Verdict = "met, with flaky cases"
			}
		}
		v.Requirements = append(v.Requirements, rv)
	}
	if m := r.Detection; m != nil {
		dv := &detectionView{Scenarios: m.Scenarios}
		for _, d := range m.Defects {
			row := detectionRow{DefectRow: d}
			for _, sc := range m.Scenarios {
				c, ok := d.Cells[sc]
				switch {
				case !ok || !c.Ran:
					row.Cells = append(row.Cells, detectionCell{Class: "none"})
				case c.Red:
					row.Cells = append(row.Cells, detectionCell{Class: "pass", Text: "caught " + strings.Join(c.Reasons, ", ")})
				default:
					row.Cells = append(row.Cells, detectionCell{Class: "fail", Text: "missed"})
				}
			}
			dv.Rows = append(dv.Rows, row)
		}
		v.Detection = dv
	}
	return v
}

// add2 adds the counts of o to c.
func (c *Counts) add2(o Counts) {
	c.Pass += o.Pass
	c.Fail += o.Fail
	c.Error += o.Error
	c.Skip += o.Skip
	c.Flaky += o.Flaky
	c.NotRun += o.NotRun
}

// outcomeClass is the outcome as the page's filters and colours know it.
func outcomeClass(c CaseResult) string {
	if c.NotRunYet() {
		return "not-run"
	}
	return string(c.Outcome)
}

// anchor is an element id for a case.
func anchor(name string) string {
	return "case-" + filepath.Base(EvidenceDir("", name))
}

// evidenceLinks lists the files of an evidence folder, relative to dir.
func evidenceLinks(dir, evidence string) []link {
	if evidence == "" {
		return nil
	}
	var out []link
	_ = filepath.WalkDir(evidence, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || len(out) >= 200 {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			rel = p
		}
		name, _ := filepath.Rel(evidence, p)
		out = append(out, link{Href: filepath.ToSlash(rel), Text: filepath.ToSlash(name)})
		return nil
	})
	return out
}

// faultTimes finds the "15:04:05.000–15:04:05.000" span in a fault's
// description (see package faults); the end may be "active".
var faultTimes = regexp.MustCompile(`(\d\d:\d\d:\d\d\.\d{3})–(\d\d:\d\d:\d\d\.\d{3}|active)`)

// faultSpan places a fault on the case's timeline, as percentages of the
// case's duration from its start.
func faultSpan(desc string, start time.Time, took time.Duration) faultView {
	fv := faultView{Text: desc}
	m := faultTimes.FindStringSubmatch(desc)
	if m == nil || start.IsZero() || took <= 0 {
		return fv
	}
	at := func(s string) (time.Time, bool) {
		t, err := time.ParseInLocation("15:04:05.000", s, start.Location())
		if err != nil {
			return time.Time{}, false
		}
		y, mo, d := start.Date()
		return time.Date(y, mo, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), start.Location()), true
	}
	from, ok := at(m[1])
	if !ok {
		return fv
	}
	to := start.Add(took)
	if m[2] != "active" {
		if t, ok := at(m[2]); ok {
			to = t
		}
	}
	pct := func(t time.Time) float64 {
		p := 100 * float64(t.Sub(start)) / float64(took)
		return min(max(p, 0), 100)
	}
	fv.Left = pct(from)
	fv.Width = max(pct(to)-fv.Left, 0.5)
	return fv
}
