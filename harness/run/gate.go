package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// ErrGateFailed is wrapped when the release gate blocks a run (the CLI
// exits 1, as for a conformance failure).
var ErrGateFailed = errors.New("release gate failed")

// ApplyGate applies the gate file to the run in artifacts on the day of
// now: it checks that the gate names only cells of the default matrix and
// scenarios of the catalogue, requires every case those plan, writes the
// verdict into the run's reports (report.json, junit.xml, report.html,
// the summary) and returns it, with an error wrapping ErrGateFailed when
// it blocks.
func ApplyGate(artifacts, file string, now time.Time) (*reports.Verdict, error) {
	g, err := reports.LoadGate(file)
	if err != nil {
		return nil, err
	}
	run, err := reports.ReadRun(artifacts)
	if err != nil {
		return nil, err
	}
	expected, err := gateExpects(g)
	if err != nil {
		return nil, fmt.Errorf("gate file %s: %w", file, err)
	}
	v := g.Evaluate(run, file, expected, now)
	run.Gate = v
	if err := run.Write(artifacts); err != nil {
		return v, err
	}
	if !v.Pass {
		return v, fmt.Errorf("%w: %d blocking findings (see %s)", ErrGateFailed, len(v.Blocking()), artifacts)
	}
	return v, nil
}

// gateExpects lists the tests the gate requires: every test of the whole
// matrix's plan in a required cell or of a required scenario.
func gateExpects(g *reports.Gate) ([]string, error) {
	cells, err := matrix.Plan(matrix.Filter{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name())
	}
	for _, c := range g.Required.Cells {
		if !slices.Contains(names, c) {
			return nil, fmt.Errorf("required cell %q is not a cell of the matrix; the cells are: %s", c, strings.Join(names, " "))
		}
	}
	for _, id := range g.Required.Scenarios {
		if _, ok := catalog.ByID(id); !ok {
			return nil, fmt.Errorf("required scenario %q is not in the catalogue (see `harness list`)", id)
		}
	}
	for _, q := range g.Quarantine {
		id, _, _ := strings.Cut(q.Case, "[")
		if _, ok := catalog.ByID(strings.TrimSuffix(id, "/with-control-config")); !ok {
			return nil, fmt.Errorf("quarantined case %q names no scenario of the catalogue", q.Case)
		}
	}
	var out []string
	for _, p := range catalog.PlannedResults(catalog.Plan(catalog.Catalogue(), cells, catalog.Filter{})) {
		if g.Requires(p.ID, p.Cell) {
			out = append(out, p.Name)
		}
	}
	return out, nil
}
