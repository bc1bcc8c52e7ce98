package kind

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

func spec2(nodes int) clusters.Spec {
	return clusters.Spec{Name: "e", Domain: "d.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: nodes}, {Name: "b", Nodes: 1}}}
}

// What Up refuses, it refuses before it builds, starts or creates anything.
func TestUpRefusesBeforeTouchingAnything(t *testing.T) {
	p := New(Options{StateRoot: t.TempDir(), CacheDir: t.TempDir(), BinDir: "/nonexistent"}).(*provider)
	ctx := context.Background()

	many := clusters.Spec{Name: "e", Domain: "d.test"}
	for i := range MaxClusters + 1 {
		many.Clusters = append(many.Clusters, clusters.ClusterSpec{Name: string(rune('a' + i)), Nodes: 1})
	}
	_, err := p.Up(ctx, many)
	require.ErrorIs(t, err, clusters.ErrInvalidSpec)

	require.NoError(t, os.MkdirAll(p.dir("e"), 0o700))
	require.NoError(t, p.save(state{Spec: spec2(2)}))
	_, err = p.Up(ctx, spec2(3))
	require.ErrorContains(t, err, "another topology")
	require.ErrorContains(t, err, `cluster "a" nodes 2 → 3`)
	require.ErrorContains(t, err, "--recreate")
}

func TestStatusAndDownOfNothing(t *testing.T) {
	p := New(Options{StateRoot: t.TempDir()})
	_, err := p.Status(context.Background(), "none")
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.NoError(t, p.Down(context.Background(), "none"), "down of an environment that does not exist")
}

func TestNamesListsRecordedEnvironments(t *testing.T) {
	o := Options{StateRoot: t.TempDir()}
	p := New(o).(*provider)
	require.NoError(t, os.MkdirAll(p.dir("e"), 0o700))
	require.NoError(t, p.save(state{Spec: spec2(1)}))
	require.NoError(t, os.MkdirAll(p.daemonDir(), 0o700)) // the daemon's folder is no environment
	names, err := Names(o)
	require.NoError(t, err)
	require.Equal(t, []string{"e"}, names)
}

// TestRemoveModulesDir: the folder the nodes' mount made goes while empty;
// one that something filled since stays, and a missing one is no error.
func TestRemoveModulesDir(t *testing.T) {
	old := modulesDir
	t.Cleanup(func() { modulesDir = old })
	modulesDir = filepath.Join(t.TempDir(), "modules")

	require.NoError(t, removeModulesDir(), "missing")
	require.NoError(t, os.Mkdir(modulesDir, 0o755))
	require.NoError(t, removeModulesDir())
	require.NoDirExists(t, modulesDir)

	require.NoError(t, os.MkdirAll(filepath.Join(modulesDir, "6.1.0"), 0o755))
	require.NoError(t, removeModulesDir(), "filled since")
	require.DirExists(t, filepath.Join(modulesDir, "6.1.0"))
}
