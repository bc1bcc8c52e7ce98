package harness_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/nvcf/conformance/"

// floors is the layering drawn in docs/architecture.md: a package may import
// packages on its own floor or below, never above. The longest matching
// prefix decides a package's floor.
var floors = []struct {
	prefix string
	floor  int
}{
	{"model", 0},
	{"wire", 0},
	{"internal", 0},
	{"topologies", 0},
	{"reports", 0},
	{"clusters", 1},
	{"faults", 1},
	{"pki", 2},
	{"fixtures", 3},
	{"deploy", 4},
	{"scenarios", 5},
	// The declarations, the plan and the run config: what the runner and
	// the CLI import of the scenarios. It imports deploy/manifests (its
	// RunConfig names images, flavor and defects), so it cannot sit lower.
	{"scenarios/catalog", 5},
	{"harness", 6},
	{"cmd", 7},
}

func floorOf(pkg string) (int, bool) {
	rel, ok := strings.CutPrefix(pkg, module)
	if !ok {
		return 0, false
	}
	best, floor := -1, 0
	for _, f := range floors {
		if (rel == f.prefix || strings.HasPrefix(rel, f.prefix+"/")) && len(f.prefix) > best {
			best, floor = len(f.prefix), f.floor
		}
	}
	return floor, best >= 0
}

// TestNothingImportsUpwards fails when a package imports one on a higher
// floor, or when a package is on no floor at all.
func TestNothingImportsUpwards(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`, module+"...").Output()
	require.NoError(t, err, "go list")
	var violations []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		from, ok := floorOf(fields[0])
		if !ok {
			violations = append(violations, fields[0]+" is on no floor; add it to docs/architecture.md and this test")
			continue
		}
		for _, imp := range fields[1:] {
			if to, ok := floorOf(imp); ok && to > from {
				violations = append(violations, fields[0]+" (floor "+itoa(from)+") imports "+imp+" (floor "+itoa(to)+")")
			}
		}
	}
	require.Empty(t, violations)
}

func TestFloorOf(t *testing.T) {
	for pkg, want := range map[string]int{
		module + "model/topology":      0,
		module + "wire/reason":         0,
		module + "internal/atomicfile": 0,
		module + "fixtures/pylon":      3,
		module + "deploy/manifests":    4,
		module + "scenarios/probe":     5,
		module + "scenarios/catalog":   5,
		module + "harness/run":         6,
		module + "cmd/harness":         7,
	} {
		got, ok := floorOf(pkg)
		require.True(t, ok, pkg)
		require.Equal(t, want, got, pkg)
	}
	_, ok := floorOf("example.com/other")
	require.False(t, ok)
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestHarnessLinksNoTestFramework fails when bin/harness links package
// testing or the e2e-framework: the runner and the CLI import the
// scenarios' declarations (scenarios/catalog), never the suite.
func TestHarnessLinksNoTestFramework(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/harness").Output()
	require.NoError(t, err, "go list")
	var linked []string
	for _, dep := range strings.Fields(string(out)) {
		if dep == "testing" || strings.HasPrefix(dep, "sigs.k8s.io/e2e-framework") {
			linked = append(linked, dep)
		}
	}
	require.Empty(t, linked, "cmd/harness links the test framework; find the import with `go list -deps -f '{{.ImportPath}} {{.Imports}}' ./cmd/harness`")
}
