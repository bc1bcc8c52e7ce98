package reports

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Gate is the release gate: the committed file that says which cells and
// scenarios must pass for a release, which cases are quarantined (each
// with an owner, a reason and an expiry) and whether a flaky case blocks.
type Gate struct {
	// Flaky is "block" (the default: a case that passed only on a rerun
	// blocks a release) or "allow".
	Flaky string `json:"flaky,omitempty"`
	// Required lists what a release needs.
	Required Required `json:"required"`
	// Quarantine lists the cases whose failure does not block a release
	// until their expiry.
	Quarantine []Quarantine `json:"quarantine,omitempty"`
}

// Required lists what must be in a run, and pass, for a release.
type Required struct {
	// Cells are cell names ("workload=deployment,trust=bundle"): every
	// case planned in them is required.
	Cells []string `json:"cells,omitempty"`
	// Scenarios are scenario IDs: every case of them is required.
	Scenarios []string `json:"scenarios,omitempty"`
}

// Quarantine is one quarantined case.
type Quarantine struct {
	// Case is a scenario ID (every case of it, in every cell) or a test name.
	Case    string `json:"case"`
	Owner   string `json:"owner"`
	Reason  string `json:"reason"`
	Expires string `json:"expires"` // YYYY-MM-DD, the last day it holds
}

// String is "owner=…; expires=…; reason=…".
func (q Quarantine) String() string {
	return fmt.Sprintf("owner=%s; expires=%s; reason=%s", q.Owner, q.Expires, q.Reason)
}

// Covers reports whether q applies to the case c.
func (q Quarantine) Covers(c CaseResult) bool { return q.Case == c.Name || q.Case == c.ID }

// expired reports whether q no longer holds on the day of now.
func (q Quarantine) expired(now time.Time) bool {
	day, _ := time.Parse(time.DateOnly, q.Expires)
	return now.UTC().Format(time.DateOnly) > day.Format(time.DateOnly)
}

// LoadGate reads and checks a gate file.
func LoadGate(path string) (*Gate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gate file: %w", err)
	}
	var g Gate
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		return nil, fmt.Errorf("gate file %s: %w", path, err)
	}
	if err := g.check(); err != nil {
		return nil, fmt.Errorf("gate file %s: %w", path, err)
	}
	return &g, nil
}

func (g *Gate) check() error {
	if g.Flaky != "" && g.Flaky != "block" && g.Flaky != "allow" {
		return fmt.Errorf("flaky: %q is neither block nor allow", g.Flaky)
	}
	if len(g.Required.Cells) == 0 && len(g.Required.Scenarios) == 0 {
		return fmt.Errorf("required: names no cell and no scenario; a gate that requires nothing passes every run")
	}
	for i, q := range g.Quarantine {
		var missing []string
		for _, f := range []struct{ name, v string }{{"case", q.Case}, {"owner", q.Owner}, {"reason", q.Reason}, {"expires", q.Expires}} {
			if strings.TrimSpace(f.v) == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("quarantine entry %d (%q) lacks %s: every quarantine names its case, owner, reason and expiry", i+1, q.Case, strings.Join(missing, ", "))
		}
		if _, err := time.Parse(time.DateOnly, q.Expires); err != nil {
			return fmt.Errorf("quarantine of %q: expires %q is not a date like 2026-12-31", q.Case, q.Expires)
		}
	}
	return nil
}

// Requires reports whether the gate requires the case of scenario id in cell.
func (g *Gate) Requires(id, cell string) bool {
	return slices.Contains(g.Required.Scenarios, id) || slices.Contains(g.Required.Cells, cell)
}

// Verdict is what a gate decided about a run.
type Verdict struct {
	// File is the gate file applied.
	File string `json:"file"`
	Pass bool   `json:"pass"`
	// Date is the day the quarantines were judged on.
	Date     string    `json:"date"`
	Findings []Finding `json:"findings,omitempty"`
	// Quarantine is the gate's quarantine list, for reports.
	Quarantine []Quarantine `json:"quarantine,omitempty"`
}

// Finding is one thing the gate noticed.
type Finding struct {
	// Case is a test name, a scenario ID, a cell or a quarantine entry.
	Case string `json:"case"`
	// Kind is failed, errored, not-run, missing, flaky, quarantined,
	// quarantine-expired or not-required.
	Kind     string `json:"kind"`
	Blocking bool   `json:"blocking"`
	Detail   string `json:"detail,omitempty"`
}

// Blocking are the findings that fail the gate.
func (v *Verdict) Blocking() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Blocking {
			out = append(out, f)
		}
	}
	return out
}

// Line is the verdict in one line.
func (v *Verdict) Line() string {
	if v.Pass {
		return fmt.Sprintf("pass (%s, %d notes)", v.File, len(v.Findings))
	}
	return fmt.Sprintf("FAIL (%s): %d blocking of %d findings", v.File, len(v.Blocking()), len(v.Findings))
}

// quarantineOf finds the quarantine entry covering c (a nil verdict has none).
func (v *Verdict) quarantineOf(name string) (Quarantine, bool) {
	if v == nil {
		return Quarantine{}, false
	}
	id := name
	if i := strings.IndexByte(name, '['); i >= 0 {
		id = strings.TrimSuffix(name[:i], "/with-control-config")
	}
	for _, q := range v.Quarantine {
		if q.Covers(CaseResult{Name: name, ID: id}) {
			return q, true
		}
	}
	return Quarantine{}, false
}

// Evaluate applies the gate to a run on the day of now. expected are the
// names of the cases the gate requires (the plan of its required cells
// and scenarios over the whole matrix); one missing from the run, or
// planned and never run, blocks. A required case that failed or errored
// blocks unless quarantined; a flaky one blocks when the policy says so;
// an expired quarantine blocks whatever its case did. Cases outside the
// requirement are noted, never blocking.
func (g *Gate) Evaluate(run Run, file string, expected []string, now time.Time) *Verdict {
	v := &Verdict{File: file, Date: now.UTC().Format(time.DateOnly), Quarantine: g.Quarantine}
	note := func(c, kind string, blocking bool, detail string) {
		v.Findings = append(v.Findings, Finding{Case: c, Kind: kind, Blocking: blocking, Detail: detail})
	}
	for _, q := range g.Quarantine {
		if q.expired(now) {
			note(q.Case, "quarantine-expired", true, fmt.Sprintf("quarantine expired on %s (%s): fix the case or renew the quarantine with a reason", q.Expires, q.Owner))
		}
	}
	ran := map[string]bool{}
	ids, cells := map[string]bool{}, map[string]bool{}
	for _, c := range run.Cases {
		ran[c.Name] = true
		if !c.NotRunYet() {
			ids[c.ID], cells[c.Cell] = true, true
		}
		required := slices.Contains(expected, c.Name) || g.Requires(c.ID, c.Cell)
		q, quarantined := v.quarantineOf(c.Name)
		kind := ""
		switch {
		case c.NotRunYet():
			kind = "not-run"
		case c.Outcome == Fail:
			kind = "failed"
		case c.Outcome == Error:
			kind = "errored"
		case c.Outcome == Flaky:
			kind = "flaky"
		default:
			continue
		}
		msg := firstLine(c.Message)
		switch {
		case quarantined && !q.expired(now):
			note(c.Name, "quarantined", false, kind+": "+msg+" (quarantined: "+q.String()+")")
		case !required:
			note(c.Name, "not-required", false, kind+": "+msg)
		case kind == "flaky":
			note(c.Name, kind, g.Flaky != "allow", fmt.Sprintf("passed on attempt %d (gate policy flaky=%s)", c.Tries(), g.flakyPolicy()))
		default:
			note(c.Name, kind, true, msg)
		}
	}
	for _, name := range expected {
		if !ran[name] {
			note(name, "missing", true, "required by the gate, not in the run")
		}
	}
	for _, id := range g.Required.Scenarios {
		if !ids[id] {
			note(id, "missing", true, "required scenario: no case of it ran")
		}
	}
	for _, cell := range g.Required.Cells {
		if !cells[cell] {
			note(cell, "missing", true, "required cell: no case ran in it")
		}
	}
	v.Pass = len(v.Blocking()) == 0
	return v
}

func (g *Gate) flakyPolicy() string {
	if g.Flaky == "" {
		return "block"
	}
	return g.Flaky
}

// maxMissingShown bounds the missing cases Text lists one by one.
const maxMissingShown = 10

// Text writes the verdict for a terminal.
func (v *Verdict) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate %s\n", v.Line())
	missing := 0
	for _, f := range v.Findings {
		mark := "note "
		if f.Blocking {
			mark = "BLOCK"
		}
		if f.Kind == "missing" {
			if missing++; missing > maxMissingShown {
				continue
			}
		}
		fmt.Fprintf(&b, "  %s %-18s %s: %s\n", mark, f.Kind, f.Case, f.Detail)
	}
	if missing > maxMissingShown {
		fmt.Fprintf(&b, "  BLOCK %-18s … and %d more required cases missing from the run (all in report.json and report.html)\n", "missing", missing-maxMissingShown)
	}
	return b.String()
}
