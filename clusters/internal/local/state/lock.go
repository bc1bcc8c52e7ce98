package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is wrapped by Lock when another harness command holds the lock.
var ErrLocked = errors.New("another harness command is changing environments")

// Lock takes the machine-wide lock root/lock (flock, released when the
// process dies, so a killed command never leaves it held). It fails at once
// when another process holds it, naming that process.
func Lock(root string) (unlock func(), err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("state root %s: %w", root, err)
	}
	path := filepath.Join(root, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (pid %s holds %s); wait for it to finish", ErrLocked, strings.TrimSpace(string(holder)), path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
