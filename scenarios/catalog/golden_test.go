package catalog

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/matrix"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata from the catalogue")

// goldenCases renders every test `harness run` plans by default (the
// cells of matrix.Plan, the one insecure cell among them): its name, its
// expectation, its control and its labels, one a line.
func goldenCases(t *testing.T) string {
	cells, err := matrix.Plan(matrix.Filter{})
	require.NoError(t, err)
	var b strings.Builder
	for _, c := range Plan(Catalogue(), cells, Filter{}) {
		s := c.Scenario
		line := func(name string) {
			fmt.Fprintf(&b, "%s expect=%s control=%s labels=%s\n", name, s.Expect, s.Control, strings.Join(s.Labels, ","))
		}
		line(c.Name())
		if !s.Expect.IsPass() {
			line(c.ControlConfigName())
		}
	}
	return b.String()
}

// goldenSummaries renders every scenario's ID and summary, one a line.
func goldenSummaries() string {
	var b strings.Builder
	for _, s := range Catalogue() {
		fmt.Fprintf(&b, "%s: %s\n", s.ID, s.Summary)
	}
	return b.String()
}

// TestPlannedCasesAreStable pins the name, expectation, control and labels
// of every test in the default matrix, and every scenario's summary, so a
// change of the catalogue's shape cannot change what runs or what reports
// say. After a deliberate change:
// go test ./scenarios/catalog/ -run 'TestPlannedCasesAreStable|TestEveryRequirementIsCovered' -update.
func TestPlannedCasesAreStable(t *testing.T) {
	golden(t, "cases.golden", goldenCases(t))
	golden(t, "summaries.golden", goldenSummaries())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "%s differs from the catalogue", path)
}
