package scenarios

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/scenarios/catalog"
)

// TestEveryScenarioHasItsSteps: every scenario of the catalogue has
// exactly one Try in tries (a map: one per ID), and every Try belongs to
// a scenario of the catalogue.
func TestEveryScenarioHasItsSteps(t *testing.T) {
	var ids []string
	for _, s := range catalog.Catalogue() {
		ids = append(ids, s.ID)
		try, ok := tries[s.ID]
		require.True(t, ok, "%s has no steps in tries (tries.go)", s.ID)
		require.NotNil(t, try, s.ID)
	}
	for id := range tries {
		require.True(t, slices.Contains(ids, id), "tries holds steps for %s, which is not in the catalogue", id)
	}
	require.Len(t, tries, len(ids))
}

// TestConnectRefusesUnknownCases: a run config naming a case the
// catalogue lacks stops the suite before it connects to anything, with
// an error that TestScenarios reports (and the JUnit holds).
func TestConnectRefusesUnknownCases(t *testing.T) {
	for name, want := range map[string]string{
		"tls/no-such-scenario[workload=statefulset,trust=bundle]": `scenario "tls/no-such-scenario" is not in the catalogue`,
		"tls/wrong-root": "not a case name",
		"tls/wrong-root[workload=statefulset,trust=nothing]": "tls/wrong-root[workload=statefulset,trust=nothing]",
	} {
		_, err := Connect(&catalog.RunConfig{Artifacts: t.TempDir(), Cases: []string{name}})
		require.ErrorContains(t, err, want, name)
		require.ErrorContains(t, err, "run config: ", name)
	}
	_, err := Connect(&catalog.RunConfig{Artifacts: t.TempDir()})
	require.ErrorContains(t, err, "no cases to run")
}
