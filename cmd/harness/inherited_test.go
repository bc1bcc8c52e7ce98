package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestInheritedFilesStayBehind: a descriptor opened without close-on-exec,
// as flock(1) hands its lock to the command, is marked close-on-exec.
func TestInheritedFilesStayBehind(t *testing.T) {
	fd, err := unix.Open(filepath.Join(t.TempDir(), "lock"), unix.O_CREAT|unix.O_RDONLY, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	require.Zero(t, flags&unix.FD_CLOEXEC, "opened without close-on-exec")

	keepInheritedFiles()

	flags, err = unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	require.NotZero(t, flags&unix.FD_CLOEXEC, "an inherited descriptor must not pass to the processes the harness starts")
}
