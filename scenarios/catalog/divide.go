package catalog

import (
	"cmp"
	"slices"
	"time"

	"github.com/nvcf/conformance/model/matrix"
)

// What Divide assumes a part of a plan costs at time scale 1. They are
// estimates from the runs in docs/performance.md, not measurements of this
// run: they only balance the parts.
const (
	// costCell is a cell's first test with its deployment (or the switch
	// from the cell before).
	costCell = 8 * time.Second
	// costRefusal is a fail-closed test that runs alone: a refusal's
	// window, often a rollout.
	costRefusal = 5 * time.Second
	// costControl is the control-config twin of such a test.
	costControl = time.Second
	// costPass is a positive test that runs alone.
	costPass = time.Second
	// costBatch is one batch of isolated tests running at the same time.
	costBatch = 5 * time.Second
	// costStagger is how much later each part starts than the one before:
	// the environments come up one after another, the second while the
	// first deploys its first cell, so its suite starts 18–19 s after the
	// first's (measured in `harness run` and `harness bench`, 2026-12-05).
	costStagger = 18 * time.Second
)

// Divide splits a plan into at most n parts of about equal running time,
// one for each environment of a run, so that they can run at the same
// time. It keeps together what must be: the isolated cases of a cell (they
// run at the same time anyway) and a case with its control-config twin.
// The other cases of a cell may go to different parts, each of which then
// deploys the cell. The environments come up one after another, so each
// part is given costStagger less work than the one before. Every part
// lists its cases in plan order; parts that would be empty are left out. The result depends on the plan, n and
// parallel only.
func Divide(plan []Case, n, parallel int) [][]Case {
	if n <= 1 || len(plan) == 0 {
		return [][]Case{plan}
	}
	units := unitsOf(plan, parallel)
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	// Longest first, plan order among equals: the greedy's usual order.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(units[b].cost, units[a].cost) })
	load := make([]time.Duration, n)
	for p := range load {
		load[p] = time.Duration(p) * costStagger // later parts start later
	}
	cells := make([]map[matrix.Cell]bool, n)
	for i := range cells {
		cells[i] = map[matrix.Cell]bool{}
	}
	part := make([]int, len(plan)) // plan index → part
	for _, ui := range order {
		u := units[ui]
		best, bestLoad := 0, time.Duration(-1)
		for p := range n {
			l := load[p] + u.cost
			if !cells[p][u.cell] {
				l += costCell
			}
			if bestLoad < 0 || l < bestLoad {
				best, bestLoad = p, l
			}
		}
		load[best], cells[best][u.cell] = bestLoad, true
		for _, i := range u.cases {
			part[i] = best
		}
	}
	out := make([][]Case, n)
	for i, c := range plan {
		out[part[i]] = append(out[part[i]], c)
	}
	return slices.DeleteFunc(out, func(p []Case) bool { return len(p) == 0 })
}

// unit is what Divide keeps together: the isolated cases of a cell, or
// one other case.
type unit struct {
	cell  matrix.Cell
	cases []int // indexes into the plan
	tests int
	cost  time.Duration
}

// unitsOf cuts plan into units, in plan order of their first case.
func unitsOf(plan []Case, parallel int) []unit {
	var units []unit
	isolated := map[matrix.Cell]int{} // cell → its unit of isolated cases
	for i, c := range plan {
		tests := 1
		if !c.Scenario.Expect.IsPass() {
			tests = 2 // the case and its control-config twin
		}
		if c.Scenario.Isolated() {
			u, ok := isolated[c.Cell]
			if !ok {
				u = len(units)
				isolated[c.Cell] = u
				units = append(units, unit{cell: c.Cell})
			}
			units[u].cases = append(units[u].cases, i)
			units[u].tests += tests
			continue
		}
		cost := costPass
		if tests > 1 {
			cost = costRefusal + costControl
		}
		if c.Scenario.Takes > cost {
			cost = c.Scenario.Takes
		}
		units = append(units, unit{cell: c.Cell, cases: []int{i}, tests: tests, cost: cost})
	}
	parallel = max(parallel, 1)
	for _, u := range isolated {
		units[u].cost = time.Duration((units[u].tests+parallel-1)/parallel) * costBatch
	}
	return units
}

// Estimate is what Divide assumes a plan takes to run alone.
func Estimate(plan []Case, parallel int) time.Duration {
	var d time.Duration
	seen := map[matrix.Cell]bool{}
	for _, u := range unitsOf(plan, parallel) {
		d += u.cost
		if !seen[u.cell] {
			seen[u.cell] = true
			d += costCell
		}
	}
	return d
}
