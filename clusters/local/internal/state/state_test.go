package state

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir)
	require.ErrorIs(t, err, ErrNoState)
	spec := clusters.Spec{Name: "x", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 1}}}
	s := &State{Spec: spec, SpecHash: spec.Hash(), AgentPID: 42, Processes: []Process{{Name: "a/etcd", PID: 7, Marker: dir}}}
	require.NoError(t, s.Save(dir))
	got, err := Load(dir)
	require.NoError(t, err)
	require.Equal(t, s.Spec, got.Spec)
	require.Equal(t, 7, got.Processes[0].PID)
	names, err := Names(filepath.Dir(dir))
	require.NoError(t, err)
	require.Contains(t, names, filepath.Base(dir))
}

func TestRemoveExceptLogs(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "logs"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logs", "agent.log"), []byte("x"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "etcd"), 0o700))
	require.NoError(t, os.WriteFile(File(dir), []byte("{}"), 0o600))
	require.NoError(t, RemoveExceptLogs(dir))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	require.Equal(t, "logs", ents[0].Name())
}

// TestLockExcludesOtherProcess holds the lock here and checks that flock(1)
// in another process cannot take it, then can once released.
func TestLockExcludesOtherProcess(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed (util-linux)")
	}
	root := t.TempDir()
	unlock, err := Lock(context.Background(), root, nil)
	require.NoError(t, err)
	err = exec.Command("flock", "-n", filepath.Join(root, "lock"), "true").Run()
	require.Error(t, err, "a second process took the held lock")
	unlock()
	require.NoError(t, exec.Command("flock", "-n", filepath.Join(root, "lock"), "true").Run())
	unlock2, err := Lock(context.Background(), root, nil)
	require.NoError(t, err)
	unlock2()
}

// A second Lock in the same process (another open file description) waits
// and gives up when its context ends.
func TestLockWaitsUntilContextEnds(t *testing.T) {
	root := t.TempDir()
	unlock, err := Lock(context.Background(), root, nil)
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var progress strings.Builder
	_, err = Lock(ctx, root, &progress)
	require.ErrorIs(t, err, ErrLocked)
	require.Contains(t, progress.String(), "waiting for another harness command")
}
