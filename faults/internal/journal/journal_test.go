package journal

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPutListRemove(t *testing.T) {
	j, err := Open(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, j.Put(Entry{ID: "a", Kind: "partition", Cleanup: Cleanup{NFT: &NFT{Comment: "nvcf-fault:a"}}}))
	require.NoError(t, j.Put(Entry{ID: "b", Kind: "scale"}))
	es, err := j.List()
	require.NoError(t, err)
	require.Len(t, es, 2)
	require.Equal(t, os.Getpid(), es[0].PID)
	require.True(t, Alive(es[0]), "the test process owns the entry")
	require.Equal(t, "nvcf-fault:a", es[0].Cleanup.NFT.Comment)
	fi, err := os.Stat(j.Path())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.NoError(t, j.Remove("a"))
	es, err = j.List()
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, "b", es[0].ID)
}

func TestAliveDetectsDeadOwner(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	pid := cmd.Process.Pid
	require.False(t, Alive(Entry{PID: pid, PIDStart: 1}))
	// Same pid, wrong start time: a reused pid is not the owner.
	require.False(t, Alive(Entry{PID: os.Getpid(), PIDStart: StartTime(os.Getpid()) + 1}))
}
