package run

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// TestEveryDefectPlansItsScenarios: every scenario a defect expects exists
// and has at least one case in the cells its selftest run deploys.
func TestEveryDefectPlansItsScenarios(t *testing.T) {
	for _, d := range defects.Registry() {
		k := keyOf(d)
		cells, err := selftestCells(k, d.Scenarios)
		require.NoError(t, err, d.Name)
		for _, id := range d.Scenarios {
			_, ok := catalog.ByID(id)
			require.True(t, ok, "defect %s expects unknown scenario %q", d.Name, id)
			f, err := catalog.ParseFilter("^"+regexp.QuoteMeta(id)+"$", "", "")
			require.NoError(t, err)
			require.NotEmpty(t, catalog.Plan(catalog.Catalogue(), cells, f),
				"defect %s: scenario %s has no case in workload=%s trust=%s", d.Name, id, k.workloads, k.trusts)
		}
	}
}

// TestSelftestLeavesCampaignDefectsOut: a defect only a fault sequence
// reveals has no scenario to run; selftest leaves it out (with a note), and
// refuses a selection of such defects only.
func TestSelftestLeavesCampaignDefectsOut(t *testing.T) {
	matrixDefect := defects.Defect{Name: "m", Scenarios: []string{"authority/missing"}}
	campaignDefect := defects.Defect{Name: "c", Campaign: "I4-no-leaks", Sequence: "partition, then pylon-leave"}
	run, campaign := SelftestDefects([]defects.Defect{campaignDefect, matrixDefect})
	require.Equal(t, []defects.Defect{matrixDefect}, run)
	require.Equal(t, []defects.Defect{campaignDefect}, campaign)
	require.Contains(t, CampaignNote(campaignDefect), "`harness campaign` catches it (invariant I4-no-leaks")
	require.NoError(t, ErrOnlyCampaign([]defects.Defect{campaignDefect, matrixDefect}))
	require.NoError(t, ErrOnlyCampaign(nil))
	require.ErrorContains(t, ErrOnlyCampaign([]defects.Defect{campaignDefect}), "no scenario catches c (I4-no-leaks): only a sequence of faults reveals them; run `harness campaign`")
	for _, d := range defects.Registry() {
		require.Equal(t, d.ByCampaign(), len(d.Scenarios) == 0, "%s: a scenario or a campaign invariant catches it, not both", d.Name)
	}
}

func TestSelftestCellsLeaveOutTheInsecureProfile(t *testing.T) {
	k := selftestKey{workloads: "statefulset", trusts: "bundle"}
	cells, err := selftestCells(k, []string{"tls/pylon-verified"})
	require.NoError(t, err)
	require.Len(t, cells, 1, "tls/pylon-verified runs in the secure cell only")
	cells, err = selftestCells(k, []string{"tls/explicit-http-insecure-profile"})
	require.NoError(t, err)
	require.Len(t, cells, 2, "a scenario of the insecure profile keeps its cell")
}

func TestRejudgeReadsAnEarlierSelftest(t *testing.T) {
	dir := t.TempDir()
	d, ok := defects.Lookup(defects.RouterDefaultBackend)
	require.True(t, ok)
	write := func(sub, name, id string, o reports.Outcome, observed string) {
		require.NoError(t, reports.WriteCase(reports.CaseResult{Name: name, ID: id, Outcome: o, Observed: observed,
			Expect: "fail-closed(invalid-authority)", Evidence: reports.EvidenceDir(filepath.Join(dir, sub), name)}))
	}
	write("baseline-1", "authority/missing[c]", "authority/missing", reports.Pass, "invalid-authority")
	write("baseline-1", "authority/unknown[c]", "authority/unknown", reports.Pass, "invalid-authority")
	write("defects/"+string(d.Name), "authority/missing[c]", "authority/missing", reports.Fail, "")
	write("defects/"+string(d.Name), "authority/unknown[c]", "authority/unknown", reports.Pass, "invalid-authority")
	m, err := Rejudge(dir, defects.Registry())
	require.NoError(t, err)
	require.Len(t, m.Defects, 1, "defects without results are left out")
	require.Equal(t, reports.Caught, m.Defects[0].Verdict, m.Defects[0].Message)
	require.True(t, m.OK())
	require.FileExists(t, filepath.Join(dir, reports.DetectionMD))
	_, err = Rejudge(t.TempDir(), defects.Registry())
	require.ErrorContains(t, err, "no baseline results")
}
