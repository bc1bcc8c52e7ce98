package topologies

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadEmbeddedByNameOrDefaultPath(t *testing.T) {
	t.Chdir(t.TempDir()) // no topologies/ here: the embedded copy answers
	for _, ref := range []string{"default", "topologies/default.yaml", "default.yaml"} {
		topo, err := Load(ref)
		require.NoError(t, err, ref)
		require.Equal(t, "default", topo.Name)
	}
	require.Contains(t, Names(), "default")
}

func TestLoadPrefersTheFile(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("default.yaml")
	require.NoError(t, err)
	p := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(p, []byte(string(data)+"\n"), 0o644))
	topo, err := Load(p)
	require.NoError(t, err)
	require.Equal(t, "default", topo.Name)
}

func TestLoadUnknownNamesTheEmbeddedOnes(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Load("nope")
	require.ErrorContains(t, err, `topology "nope": no such file`)
	require.ErrorContains(t, err, "default")
}
