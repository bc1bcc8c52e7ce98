package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is wrapped by Lock when another harness command holds the lock.
var ErrLocked = errors.New("another harness command is changing environments")

// Lock takes the machine-wide lock root/lock (flock, released when the
// process dies, so a killed command never leaves it held). While another
// process holds it, Lock waits (saying so once on progress, naming the
// holder) until ctx is done.
func Lock(ctx context.Context, root string, progress io.Writer) (unlock func(), err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("state root %s: %w", root, err)
	}
	path := filepath.Join(root, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder, _ := os.ReadFile(path)
		if !told && progress != nil {
			fmt.Fprintf(progress, "waiting for another harness command (pid %s) to finish with the clusters…\n", strings.TrimSpace(string(holder)))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%w (pid %s holds %s): %w", ErrLocked, strings.TrimSpace(string(holder)), path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
