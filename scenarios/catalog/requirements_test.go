package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryRequirementIsCovered: every scenario names the epic requirements
// it covers, each of those exists, and each of the 8 definition-of-done
// items and 5 defects is covered by at least one scenario. The coverage is
// pinned in testdata/requirements.golden.
func TestEveryRequirementIsCovered(t *testing.T) {
	known := map[string]bool{}
	for _, r := range EpicRequirements() {
		known[r.ID] = true
	}
	require.Len(t, known, 13, "8 definition-of-done items and 5 defects")
	by := map[string][]string{}
	for _, s := range Catalogue() {
		require.NotEmpty(t, s.Covers, "%s names no requirement it covers", s.ID)
		for _, r := range s.Covers {
			require.True(t, known[string(r)], "%s covers unknown requirement %q", s.ID, r)
			by[string(r)] = append(by[string(r)], s.ID)
		}
	}
	var b strings.Builder
	for _, r := range EpicRequirements() {
		require.NotEmpty(t, by[r.ID], "no scenario covers %s (%s)", r.ID, r.Title)
		ids := slices.Clone(by[r.ID])
		fmt.Fprintf(&b, "%s: %s\n", r.ID, strings.Join(ids, " "))
	}
	golden(t, "requirements.golden", b.String())
}
