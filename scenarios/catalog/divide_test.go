package catalog

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/matrix"
)

func defaultPlan(t *testing.T) []Case {
	t.Helper()
	cells, err := matrix.Default().Expand()
	require.NoError(t, err)
	return Plan(Catalogue(), cells, Filter{})
}

func TestDivideKeepsEveryCaseOnceInPlanOrder(t *testing.T) {
	plan := defaultPlan(t)
	for _, n := range []int{1, 2, 3, 5} {
		parts := Divide(plan, n, 12)
		require.LessOrEqual(t, len(parts), n)
		var all []Case
		for _, p := range parts {
			require.NotEmpty(t, p, "no empty part")
			pos := -1
			for _, c := range p {
				i := slices.IndexFunc(plan, func(x Case) bool { return x.Name() == c.Name() })
				require.Greater(t, i, pos, "n=%d: %s out of plan order", n, c.Name())
				pos = i
			}
			all = append(all, p...)
		}
		require.ElementsMatch(t, names([][]Case{plan})[0], names([][]Case{all})[0], "n=%d: every case exactly once", n)
	}
}

func TestDivideKeepsACellsIsolatedCasesTogether(t *testing.T) {
	parts := Divide(defaultPlan(t), 2, 12)
	require.Len(t, parts, 2)
	home := map[matrix.Cell]int{}
	for i, p := range parts {
		for _, c := range p {
			if !c.Scenario.Isolated() {
				continue
			}
			if h, ok := home[c.Cell]; ok {
				require.Equal(t, h, i, "isolated cases of %s in two parts", c.Cell.Name())
			}
			home[c.Cell] = i
		}
	}
}

func TestDivideBalancesTheEstimate(t *testing.T) {
	plan := defaultPlan(t)
	total := Estimate(plan, 12)
	parts := Divide(plan, 2, 12)
	require.Len(t, parts, 2)
	var longest time.Duration
	for _, u := range unitsOf(plan, 12) {
		longest = max(longest, u.cost)
	}
	// Cells that both parts deploy: each adds a deployment to the work.
	shared := 0
	for _, c := range Cells(parts[0]) {
		if slices.Contains(Cells(parts[1]), c) {
			shared++
		}
	}
	for _, p := range parts {
		t.Logf("part of %d cases, %d cells: %s of %s (%d cells in both parts)", len(p), len(Cells(p)), Estimate(p, 12), total, shared)
		// The greedy's bound: half the work and of the second part's later
		// start, plus the unit that tipped it, plus the deployments that
		// dividing adds.
		require.LessOrEqual(t, Estimate(p, 12), total/2+costStagger/2+longest+time.Duration(shared)*costCell, "part of %d cases", len(p))
	}
}

func TestDivideGivesLaterPartsLess(t *testing.T) {
	plan := defaultPlan(t)
	parts := Divide(plan, 2, 12)
	require.Less(t, Estimate(parts[1], 12), Estimate(parts[0], 12), "the second environment starts later")
}

func TestDivideIsDeterministic(t *testing.T) {
	plan := defaultPlan(t)
	require.Equal(t, names(Divide(plan, 2, 12)), names(Divide(slices.Clone(plan), 2, 12)))
}

func TestDivideSmallPlans(t *testing.T) {
	plan := defaultPlan(t)
	require.Equal(t, names([][]Case{plan[:1]}), names(Divide(plan[:1], 2, 12)), "one case, one part")
	require.Equal(t, [][]Case{nil}, Divide(nil, 2, 12), "nothing planned: one empty part, as without dividing")
}

func names(parts [][]Case) [][]string {
	var out [][]string
	for _, p := range parts {
		var ns []string
		for _, c := range p {
			ns = append(ns, c.Name())
		}
		out = append(out, ns)
	}
	return out
}
