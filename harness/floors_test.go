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
	{"harness/model", 0},
	{"internal", 0},
	{"topologies", 0},
	{"fixtures/wire", 0},
	{"reports", 0},
	{"clusters", 1},
	{"faults", 1},
	{"pki", 2},
	{"fixtures", 3},
	{"harness/probe", 4},
	{"scenarios", 4},
	{"harness/run", 5},
	{"harness", 5},
	{"cmd", 6},
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
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
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
		module + "harness/model/topology":    0,
		module + "fixtures/wire/reason":      0,
		module + "internal/atomicfile":       0,
		module + "fixtures/deploy/manifests": 3,
		module + "harness/run":               5,
		module + "harness/probe":             4,
		module + "cmd/harness":               6,
	} {
		got, ok := floorOf(pkg)
		require.True(t, ok, pkg)
		require.Equal(t, want, got, pkg)
	}
	_, ok := floorOf("example.com/other")
	require.False(t, ok)
}

func itoa(i int) string { return string(rune('0' + i)) }
