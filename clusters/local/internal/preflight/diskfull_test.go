package preflight

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A write to a full filesystem (a 1 MiB tmpfs this test mounts) gives an
// error naming the folder, its free space and the fix; the preflight disk
// check, reading the same filesystem, refuses it before any write.
func TestDiskFullOnASmallTmpfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "nvcf-preflight-test", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })

	err = Run(Checks{Disks: []Disk{{Dir: filepath.Join(dir, "state"), Min: 1 << 30, Why: "the environment", Hint: "point XDG_STATE_HOME at a larger filesystem"}}})
	require.ErrorIs(t, err, ErrFailed)
	require.Contains(t, err.Error(), "only 1.0 MiB free in "+filepath.Join(dir, "state")+"; the environment needs at least 1.0 GiB")
	require.Contains(t, err.Error(), "fix: free some space, or point XDG_STATE_HOME at a larger filesystem")

	werr := os.WriteFile(filepath.Join(dir, "state.json"), make([]byte, 2<<20), 0o644)
	require.ErrorIs(t, werr, syscall.ENOSPC)
	err = DiskFull(fmt.Errorf("save state: %w", werr))
	require.ErrorIs(t, err, ErrDiskFull)
	require.ErrorIs(t, err, syscall.ENOSPC, "the cause stays in the chain")
	require.Contains(t, err.Error(), "the filesystem of "+dir+" (0.0 MiB free) has no space left")
	require.Contains(t, err.Error(), "fix: free some space")
}

// The agent's errors reach the CLI as text; a full disk is still explained.
func TestDiskFullFromText(t *testing.T) {
	err := DiskFull(errors.New("agent: write /var/lib/x/etcd/wal: no space left on device"))
	require.ErrorIs(t, err, ErrDiskFull)
	require.Contains(t, err.Error(), "a folder of the harness has no space left")
	require.Equal(t, 1, strings.Count(DiskFull(err).Error(), "no space left\n"), "explained once")

	other := errors.New("connection refused")
	require.Equal(t, other, DiskFull(other))
	require.NoError(t, DiskFull(nil))
}
