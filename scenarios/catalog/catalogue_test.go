package catalog

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/wire/reason"
)

var idPattern = regexp.MustCompile(`^[a-z]+/[a-z0-9]+(-[a-z0-9]+)*$`)

func TestCatalogueIsConsistent(t *testing.T) {
	cat := Catalogue()
	require.NotEmpty(t, cat)
	ids := map[string]bool{}
	for _, s := range cat {
		require.Regexp(t, idPattern, s.ID)
		require.False(t, ids[s.ID], "ID %s is used twice", s.ID)
		ids[s.ID] = true
		require.True(t, strings.HasPrefix(s.ID, string(s.Layer)+"/"), "%s: the ID must start with its layer %s", s.ID, s.Layer)
		require.Contains(t, Layers, s.Layer, s.ID)
		require.NotEmpty(t, s.Summary, s.ID)
		require.NotEmpty(t, s.Labels, s.ID)
	}
	for _, s := range cat {
		if s.Expect.IsPass() {
			require.Empty(t, s.Control, "%s: a pass scenario names no control", s.ID)
			continue
		}
		require.NotEmpty(t, s.Control, "%s: a fail-closed scenario names its positive control", s.ID)
		ctl, ok := ByID(s.Control)
		require.True(t, ok, "%s: control %q is not in the catalogue", s.ID, s.Control)
		require.True(t, ctl.Expect.IsPass(), "%s: control %s must expect pass, not %s", s.ID, ctl.ID, ctl.Expect)
		for _, c := range matrixCells(t) {
			if s.AppliesTo(c) {
				require.True(t, ctl.AppliesTo(c), "%s runs in %s but its control %s does not", s.ID, c.Name(), ctl.ID)
			}
		}
		for _, r := range s.Expect.Reasons() {
			require.NotEqual(t, reason.Unknown, r, s.ID)
			require.NotEqual(t, reason.None, r, s.ID)
		}
		require.NotEmpty(t, s.Expect.Origins(), "%s: a fail-closed scenario names who must refuse (FailClosed(…).From(origin))", s.ID)
	}
}

func TestEveryLayerIsCoveredAndProbed(t *testing.T) {
	for _, l := range Layers {
		var any, probed bool
		for _, s := range Catalogue() {
			if s.Layer == l {
				any = true
				probed = probed || s.HasLabel(LabelProbe)
			}
		}
		require.True(t, any, "layer %s has no scenario", l)
		require.True(t, probed, "layer %s has no scenario driven by the harness's own probe", l)
	}
}

func matrixCells(t *testing.T) []matrix.Cell {
	cells, err := matrix.Axes{Workloads: matrix.Workloads, Trusts: matrix.Trusts, Profiles: matrix.Profiles}.Expand()
	require.NoError(t, err)
	return cells
}

func TestFilter(t *testing.T) {
	f, err := ParseFilter("^tls/", "tls,quic", "probe")
	require.NoError(t, err)
	var ids []string
	for _, s := range Catalogue() {
		if f.Match(s) {
			ids = append(ids, s.ID)
		}
	}
	require.Contains(t, ids, "tls/wrong-root")
	require.NotContains(t, ids, "tls/pylon-verified", "label probe keeps Pylon-driven scenarios out")
	require.NotContains(t, ids, "quic/bad-token", "the ID regex keeps other layers out")

	_, err = ParseFilter("(", "", "")
	require.Error(t, err)
	_, err = ParseFilter("", "tls,bogus", "")
	require.ErrorContains(t, err, `unknown layer "bogus"`)

	all, err := ParseFilter("", "", "")
	require.NoError(t, err)
	for _, s := range Catalogue() {
		require.True(t, all.Match(s))
	}
}

func TestPlan(t *testing.T) {
	cells, err := matrix.Default().Expand()
	require.NoError(t, err)
	cases := Plan(Catalogue(), cells, Filter{})
	count := map[string]int{}
	names := map[string]bool{}
	for _, c := range cases {
		count[c.Scenario.ID]++
		require.False(t, names[c.Name()], "case %s planned twice", c.Name())
		names[c.Name()] = true
	}
	// Trust-independent scenarios run once per workload kind.
	require.Equal(t, len(matrix.Workloads), count["tls/wrong-root"])
	// Per-trust scenarios run in every secure EndpointSlice cell.
	require.Equal(t, len(matrix.Workloads)*len(matrix.Trusts), count["tls/pylon-verified"])
	// Discovery-dependent scenarios add one DNS cell per workload kind; the
	// DNS-only one runs there alone, and nothing else enters a DNS cell.
	require.Equal(t, 2*len(matrix.Workloads), count["discovery/identities"])
	require.Equal(t, len(matrix.Workloads), count["discovery/srv-dashed-ip"])
	dnsCells := map[matrix.Cell]bool{}
	for _, c := range cases {
		if c.Cell.Discovery == matrix.DNS {
			dnsCells[c.Cell] = true
			require.Contains(t, c.Scenario.Requires.Discoveries, matrix.DNS, c.Name())
		}
	}
	require.Len(t, dnsCells, len(matrix.Workloads))
	// The system-plus-bundle inverse runs where its condition is deployed.
	require.Equal(t, 1, count["tls/system-roots-lack-server-ca"])
	// Bundle-only scenarios skip the system trust cells.
	require.Equal(t, 2, count["tls/missing-trust"], "in the StatefulSet cells of the bundle trusts only")
	// Insecure-profile scenarios need the insecure cell.
	require.Zero(t, count["tls/explicit-http-insecure-profile"])
	withInsecure := append(cells, matrix.InsecureCell)
	cases = Plan(Catalogue(), withInsecure, Filter{})
	require.True(t, slices.ContainsFunc(cases, func(c Case) bool {
		return c.Name() == "tls/explicit-http-insecure-profile[workload=statefulset,trust=bundle,profile=insecure]"
	}))
	// Cases come cell by cell, so one deployment serves a cell's cases.
	order := Cells(cases)
	last := -1
	for _, c := range cases {
		i := slices.Index(order, c.Cell)
		require.GreaterOrEqual(t, i, last)
		last = i
	}
	require.Equal(t, "tls/wrong-root/with-control-config[workload=deployment,trust=bundle]",
		Case{Scenario: Scenario{ID: "tls/wrong-root"}, Cell: matrix.Cell{Workload: matrix.Deployment, Trust: matrix.Bundle}}.ControlConfigName())
}

// TestResolveRoundTrips: the suite resolves the names the runner writes
// (CaseNames) into the very plan, in its order, and refuses names the
// catalogue or the matrix does not have.
func TestResolveRoundTrips(t *testing.T) {
	cells, err := matrix.Plan(matrix.Filter{})
	require.NoError(t, err)
	plan := Plan(Catalogue(), cells, Filter{})
	got, err := Resolve(Catalogue(), CaseNames(plan))
	require.NoError(t, err)
	require.Equal(t, plan, got)
	part := Divide(plan, 3, 4)[1]
	got, err = Resolve(Catalogue(), CaseNames(part))
	require.NoError(t, err)
	require.Equal(t, part, got, "a part of the plan, in its order")

	for name, want := range map[string]string{
		"tls/no-such[workload=statefulset,trust=bundle]": `scenario "tls/no-such" is not in the catalogue`,
		"tls/wrong-root": "not a case name",
		"tls/wrong-root[workload=statefulset,trust=nothing]":   "trust",
		"tls/missing-trust[workload=statefulset,trust=system]": "does not run in cell",
		"tls/wrong-root[trust=bundle,workload=statefulset]":    "not written as the runner names it",
	} {
		_, err := Resolve(Catalogue(), []string{name})
		require.ErrorContains(t, err, want, name)
	}
	twice := plan[0].Name()
	_, err = Resolve(Catalogue(), []string{twice, twice})
	require.ErrorContains(t, err, "named twice")
}
