package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Counts tallies outcomes. Every counted case is in exactly one of them:
// NotRun cases (planned, never reported) are not among the Errors.
type Counts struct {
	Pass   int `json:"pass"`
	Fail   int `json:"fail"`
	Error  int `json:"error"`
	Skip   int `json:"skip"`
	Flaky  int `json:"flaky,omitempty"`
	NotRun int `json:"notRun,omitempty"`
}

// Total is the number of cases counted.
func (c Counts) Total() int { return c.Pass + c.Fail + c.Error + c.Skip + c.Flaky + c.NotRun }

// Ran is the number of cases that reported.
func (c Counts) Ran() int { return c.Total() - c.NotRun }

func (c *Counts) add(r CaseResult) {
	switch {
	case r.NotRunYet():
		c.NotRun++
	case r.Outcome == Pass:
		c.Pass++
	case r.Outcome == Fail:
		c.Fail++
	case r.Outcome == Error:
		c.Error++
	case r.Outcome == Flaky:
		c.Flaky++
	default:
		c.Skip++
	}
}

// Line is the counts in one sentence: "12 planned: 9 passed, 1 failed,
// 0 errors, 1 flaky, 0 skipped, 1 not run".
func (c Counts) Line() string {
	return fmt.Sprintf("%d planned: %d passed, %d failed, %d errors, %d flaky, %d skipped, %d not run",
		c.Total(), c.Pass, c.Fail, c.Error, c.Flaky, c.Skip, c.NotRun)
}

// Row is one scenario across the cells it ran in.
type Row struct {
	ID     string `json:"id"`
	Layer  string `json:"layer"`
	Expect string `json:"expect"`
	// Description is the scenario's one-line summary.
	Description string `json:"description,omitempty"`
	// Cells maps a cell name to the case's outcome; a fail-closed
	// scenario's control-configuration test adds "+control-config" to it
	// only when that test did not pass.
	Cells map[string]Outcome `json:"cells"`
}

// Summary is the matrix summary of a run.
type Summary struct {
	Layers   []string          `json:"layers"`
	Cells    []string          `json:"cells"`
	Rows     []Row             `json:"rows"`
	PerLayer map[string]Counts `json:"perLayer"`
	Total    Counts            `json:"total"`
	// Failures are the results that did not pass, in name order.
	Failures []CaseResult `json:"failures,omitempty"`
	// WallTime is the run's duration, bring-up included, when known.
	WallTime time.Duration `json:"wallTime,omitempty"`
	// Provider names where the clusters came from (embedded, existing).
	Provider string `json:"provider,omitempty"`
}

// Summarize builds the Summary of results; layerOrder fixes the order of
// layers (others follow alphabetically).
func Summarize(results []CaseResult, layerOrder []string) Summary {
	s := Summary{PerLayer: map[string]Counts{}}
	rows := map[string]*Row{}
	for _, r := range results {
		if !slices.Contains(s.Layers, r.Layer) {
			s.Layers = append(s.Layers, r.Layer)
		}
		if !slices.Contains(s.Cells, r.Cell) {
			s.Cells = append(s.Cells, r.Cell)
		}
		c := s.PerLayer[r.Layer]
		c.add(r)
		s.PerLayer[r.Layer] = c
		s.Total.add(r)
		if r.Outcome != Pass && r.Outcome != Skip {
			s.Failures = append(s.Failures, r)
		}
		row := rows[r.ID]
		if row == nil {
			row = &Row{ID: r.ID, Layer: r.Layer, Expect: r.Expect, Cells: map[string]Outcome{}}
			rows[r.ID] = row
		}
		if row.Description == "" {
			row.Description = r.Description
		}
		if r.Kind == "control-config" {
			if r.Outcome != Pass {
				row.Cells[r.Cell+"+control-config"] = r.Outcome
			}
			continue
		}
		row.Cells[r.Cell] = r.Outcome
	}
	rank := func(l string) int {
		if i := slices.Index(layerOrder, l); i >= 0 {
			return i
		}
		return len(layerOrder)
	}
	slices.SortFunc(s.Layers, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	slices.Sort(s.Cells)
	for _, r := range rows {
		s.Rows = append(s.Rows, *r)
	}
	slices.SortFunc(s.Rows, func(a, b Row) int {
		if d := rank(a.Layer) - rank(b.Layer); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return s
}

// OK reports whether every counted case passed (or was skipped, or passed
// on a rerun: whether a flaky case blocks is the gate's decision).
func (s Summary) OK() bool { return s.Total.Fail == 0 && s.Total.Error == 0 && s.Total.NotRun == 0 }

// Interruption says, for a run that ended before every planned case
// reported, "interrupted after N of M planned cases; K never ran"; else "".
func (s Summary) Interruption() string {
	if s.Total.NotRun == 0 {
		return ""
	}
	return fmt.Sprintf("interrupted after %d of %d planned cases; %d never ran", s.Total.Ran(), s.Total.Total(), s.Total.NotRun)
}

// mark renders an outcome in the matrix.
func mark(o Outcome, ok bool) string {
	if !ok {
		return "·"
	}
	switch o {
	case Pass:
		return "ok"
	case Fail:
		return "FAIL"
	case Error:
		return "ERROR"
	case Flaky:
		return "FLAKY"
	default:
		return "skip"
	}
}

// Markdown writes the summary as a Markdown document.
func (s Summary) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Conformance matrix\n\n")
	if s.Provider != "" {
		fmt.Fprintf(&b, "Provider: %s\n\n", s.Provider)
	}
	if s.WallTime > 0 {
		fmt.Fprintf(&b, "Wall time: %s\n\n", s.WallTime.Round(time.Second))
	}
	if i := s.Interruption(); i != "" {
		fmt.Fprintf(&b, "**Run %s.**\n\n", i)
	}
	fmt.Fprintf(&b, "Total: %s.\n\n", s.Total.Line())
	fmt.Fprintf(&b, "| layer | planned | pass | fail | error | flaky | skip | not run |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range s.Layers {
		c := s.PerLayer[l]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", l, c.Total(), c.Pass, c.Fail, c.Error, c.Flaky, c.Skip, c.NotRun)
	}
	fmt.Fprintf(&b, "\n| scenario | expect |")
	for _, c := range s.Cells {
		fmt.Fprintf(&b, " %s |", c)
	}
	fmt.Fprintf(&b, " description |\n|---|---|%s---|\n", strings.Repeat("---|", len(s.Cells)))
	for _, r := range s.Rows {
		fmt.Fprintf(&b, "| %s | %s |", r.ID, r.Expect)
		for _, c := range s.Cells {
			o, ok := r.Cells[c]
			m := mark(o, ok)
			if cc, bad := r.Cells[c+"+control-config"]; bad {
				m += " (control-config " + mark(cc, true) + ")"
			}
			fmt.Fprintf(&b, " %s |", m)
		}
		fmt.Fprintf(&b, " %s |\n", cell(r.Description))
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(&b, "\n## Failures\n\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "- **%s** (%s): %s  \n  evidence: `%s`\n", f.Name, label(f), oneLine(f.Message), f.Evidence)
			if f.Repro != "" {
				fmt.Fprintf(&b, "  repro: `%s`\n", f.Repro)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Text writes a short summary for a terminal: counts per layer and the failures.
func (s Summary) Text(w io.Writer) error {
	var b strings.Builder
	row := func(name string, c Counts) {
		fmt.Fprintf(&b, "%-13s %3d planned: %3d pass %3d fail %3d error %3d flaky %3d skip %3d not run\n",
			name, c.Total(), c.Pass, c.Fail, c.Error, c.Flaky, c.Skip, c.NotRun)
	}
	for _, l := range s.Layers {
		row(l, s.PerLayer[l])
	}
	row("total", s.Total)
	for _, f := range s.Failures {
		if f.NotRunYet() {
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s\n  evidence: %s\n", strings.ToUpper(label(f)), f.Name, oneLine(f.Message), f.Evidence)
		if f.Repro != "" {
			fmt.Fprintf(&b, "  repro: %s\n", f.Repro)
		}
	}
	if i := s.Interruption(); i != "" {
		fmt.Fprintf(&b, "run %s\n", i)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Write writes summary.md and summary.json into dir.
func (s Summary) Write(dir string) error {
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := s.Markdown(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(data, '\n'), 0o644)
}

// label names a result's outcome for people: "not run" for a planned
// case that never reported.
func label(r CaseResult) string {
	if r.NotRunYet() {
		return "not run"
	}
	return string(r.Outcome)
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}
