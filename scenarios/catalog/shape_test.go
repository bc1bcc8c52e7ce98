package catalog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxConstructorLines bounds a scenario constructor, so that each reads
// as one sentence of steps and the steps themselves live in step files.
const maxConstructorLines = 40

// TestScenarioConstructorsAreSmall finds every scenario constructor (a
// function without receiver or parameters returning a Scenario) and
// requires one per catalogue entry, none longer than maxConstructorLines.
func TestScenarioConstructorsAreSmall(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var constructors []string
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !isConstructor(fn) {
				continue
			}
			constructors = append(constructors, fn.Name.Name)
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			require.LessOrEqual(t, lines, maxConstructorLines, "%s (%s) is %d lines long: move its steps into a step file", fn.Name.Name, name, lines)
		}
	}
	require.Len(t, constructors, len(Catalogue()), "one constructor per scenario: %v", constructors)
}

func isConstructor(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || fn.Type.Params.NumFields() != 0 || fn.Type.Results.NumFields() != 1 {
		return false
	}
	id, ok := fn.Type.Results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "Scenario"
}
