package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrDiskFull is wrapped by DiskFull's error.
var ErrDiskFull = errors.New("a disk is full")

// DiskFull turns an error caused by a full filesystem (ENOSPC, also when
// it only reached here as text, from the agent) into one that names the
// folder, its free space and what to do; other errors pass unchanged.
func DiskFull(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) {
		return err
	}
	if !errors.Is(err, syscall.ENOSPC) && !strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
		return err
	}
	where := "a folder of the harness"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		dir := filepath.Dir(pe.Path)
		where = dir
		if free, ferr := FreeBytes(dir); ferr == nil {
			where = fmt.Sprintf("%s (%s free)", dir, size(free))
		}
	}
	return fmt.Errorf("%w: %w\n  the filesystem of %s has no space left\n  fix: free some space (`df -h` shows which filesystem is full), or move the folder: "+
		"XDG_STATE_HOME for environments, --artifacts for a run's reports, XDG_CACHE_HOME for the binary cache", ErrDiskFull, err, where)
}

// size renders b in GiB, or MiB below one GiB.
func size(b uint64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return gib(b)
}
