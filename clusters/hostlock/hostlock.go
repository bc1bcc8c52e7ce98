// Package hostlock orders the root tests that change the host's network.
// Tests that build bridges, namespaces or whole environments hold the lock
// shared and run side by side (`go test ./...` runs packages in parallel);
// a test that starts a Docker daemon, which turns the FORWARD policy to
// DROP and adds chains of its own, holds it exclusively, so it neither
// breaks their pods' traffic nor sees their bridges and rules as its own.
package hostlock

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Path is the lock file every test process of the module shares.
var Path = filepath.Join(os.TempDir(), "nvcf-harness-hostnet-tests.lock")

// Shared holds the lock shared until t ends.
func Shared(t testing.TB) { hold(t, syscall.LOCK_SH) }

// Exclusive holds the lock alone until t ends: it waits for every shared
// holder to finish.
func Exclusive(t testing.TB) { hold(t, syscall.LOCK_EX) }

func hold(t testing.TB, how int) {
	t.Helper()
	f, err := lock(Path, how)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
}

// lock takes the lock on path (how: syscall.LOCK_SH or LOCK_EX, with
// LOCK_NB not to wait); closing the file releases it, and so does the
// death of the process that holds it.
func lock(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the host-network test lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
