package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/reports"
)

// Filter selects scenarios; its zero value selects all of them.
type Filter struct {
	// Run matches scenario IDs (nil: all).
	Run *regexp.Regexp
	// Layers keeps scenarios of these layers (empty: all).
	Layers []Layer
	// Labels keeps scenarios carrying at least one of these labels (empty: all).
	Labels []string
}

// ParseFilter builds a Filter from command-line values: an ID regular
// expression and comma-separated layers and labels.
func ParseFilter(run, layers, labels string) (Filter, error) {
	var f Filter
	if run != "" {
		re, err := regexp.Compile(run)
		if err != nil {
			return Filter{}, fmt.Errorf("--run %q: %w", run, err)
		}
		f.Run = re
	}
	for _, l := range split(layers) {
		if !slices.Contains(Layers, Layer(l)) {
			return Filter{}, fmt.Errorf("--layer %q: unknown layer %q; want some of %v", layers, l, Layers)
		}
		f.Layers = append(f.Layers, Layer(l))
	}
	f.Labels = split(labels)
	return f, nil
}

// Match reports whether f selects s.
func (f Filter) Match(s Scenario) bool {
	if f.Run != nil && !f.Run.MatchString(s.ID) {
		return false
	}
	if len(f.Layers) > 0 && !slices.Contains(f.Layers, s.Layer) {
		return false
	}
	if len(f.Labels) > 0 && !slices.ContainsFunc(f.Labels, s.HasLabel) {
		return false
	}
	return true
}

// Case is one scenario in one cell.
type Case struct {
	Scenario Scenario
	Cell     matrix.Cell
}

// Name is the stable test name: "tls/wrong-root[workload=deployment,trust=bundle]".
func (c Case) Name() string { return c.Scenario.ID + "[" + c.Cell.Name() + "]" }

// ControlConfigName is the name of the test that runs a fail-closed
// scenario with its control's configuration.
func (c Case) ControlConfigName() string {
	return c.Scenario.ID + "/with-control-config[" + c.Cell.Name() + "]"
}

// Test kinds: a case, and the test that runs a fail-closed case with its
// control's configuration.
const (
	KindCase          = "case"
	KindControlConfig = "control-config"
)

// Test is what a result says of c's test of kind (KindCase or
// KindControlConfig) before it runs.
func (c Case) Test(kind string) reports.CaseResult {
	name := c.Name()
	if kind == KindControlConfig {
		name = c.ControlConfigName()
	}
	s := c.Scenario
	return reports.CaseResult{
		Name: name, ID: s.ID, Layer: string(s.Layer), Cell: c.Cell.Name(), Kind: kind,
		Description: s.Summary, Expect: s.Expect.String(), Control: s.Control,
		Covers: covers(s),
	}
}

func covers(s Scenario) []string {
	var out []string
	for _, r := range s.Covers {
		out = append(out, string(r))
	}
	return out
}

// PlannedResults are the identities of every test of plan (a fail-closed
// case adds its control-configuration test), for totalling a run that
// ended early (reports.WithNotRun).
func PlannedResults(plan []Case) []reports.CaseResult {
	var out []reports.CaseResult
	for _, c := range plan {
		out = append(out, c.Test(KindCase))
		if !c.Scenario.Expect.IsPass() {
			out = append(out, c.Test(KindControlConfig))
		}
	}
	return out
}

// AppliesTo reports whether s runs in cell c, ignoring the once-per-workload
// rule for trust-independent scenarios (see Plan).
func (s Scenario) AppliesTo(c matrix.Cell) bool {
	c = c.Normalize()
	r := s.Requires
	if len(r.Workloads) > 0 && !slices.Contains(r.Workloads, c.Workload) {
		return false
	}
	if len(r.Trusts) > 0 && !slices.Contains(r.Trusts, c.Trust) {
		return false
	}
	discoveries := r.Discoveries
	if len(discoveries) == 0 {
		discoveries = []matrix.Discovery{matrix.EndpointSlice}
	}
	if !slices.Contains(discoveries, c.Discovery) {
		return false
	}
	profiles := r.Profiles
	if len(profiles) == 0 {
		profiles = []matrix.Profile{matrix.Secure}
	}
	return slices.Contains(profiles, c.Profile)
}

// Plan lists the cases to run, cell by cell in the order of cells, so one
// deployment serves all of a cell's cases. A scenario that does not depend
// on the trust axis runs in the first selected cell of each workload kind,
// discovery and profile only.
func Plan(catalogue []Scenario, cells []matrix.Cell, f Filter) []Case {
	type once struct {
		id string
		w  matrix.Workload
		d  matrix.Discovery
		p  matrix.Profile
	}
	seen := map[once]bool{}
	var out []Case
	for _, c := range cells {
		c = c.Normalize()
		for _, s := range catalogue {
			if !f.Match(s) || !s.AppliesTo(c) {
				continue
			}
			if len(s.Requires.Trusts) == 0 {
				k := once{s.ID, c.Workload, c.Discovery, c.Profile}
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, Case{Scenario: s, Cell: c})
		}
	}
	return out
}

// Cells groups cases by cell, keeping the plan's order.
func Cells(cases []Case) []matrix.Cell {
	var out []matrix.Cell
	for _, c := range cases {
		if !slices.Contains(out, c.Cell) {
			out = append(out, c.Cell)
		}
	}
	return out
}

// CaseNames are the names of plan's cases, in plan order: what a run
// config hands the suite (RunConfig.Cases).
func CaseNames(plan []Case) []string {
	out := make([]string, len(plan))
	for i, c := range plan {
		out[i] = c.Name()
	}
	return out
}

// Resolve turns case names (CaseNames) back into the cases of catalogue,
// in the order given, so the suite runs exactly what the runner planned.
// It refuses a name whose scenario the catalogue lacks, one that is not
// written as Case.Name writes it, one whose scenario does not run in its
// cell, and one named twice.
func Resolve(catalogue []Scenario, names []string) ([]Case, error) {
	out := make([]Case, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		id, rest, ok := strings.Cut(n, "[")
		cell, closed := strings.CutSuffix(rest, "]")
		if !ok || !closed {
			return nil, fmt.Errorf("case %q: not a case name, <scenario>[<cell>]", n)
		}
		i := slices.IndexFunc(catalogue, func(s Scenario) bool { return s.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("case %q: scenario %q is not in the catalogue (see `harness list`)", n, id)
		}
		parsed, err := matrix.ParseCell(cell)
		if err != nil {
			return nil, fmt.Errorf("case %q: %w", n, err)
		}
		c := Case{Scenario: catalogue[i], Cell: parsed.Normalize()}
		switch {
		case c.Name() != n:
			return nil, fmt.Errorf("case %q: not written as the runner names it, %q", n, c.Name())
		case !c.Scenario.AppliesTo(c.Cell):
			return nil, fmt.Errorf("case %q: scenario %s does not run in cell %s", n, id, c.Cell.Name())
		case seen[n]:
			return nil, fmt.Errorf("case %q: named twice", n)
		}
		seen[n] = true
		out = append(out, c)
	}
	return out, nil
}

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
