package binaries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on path, waiting (and saying so) while
// another process holds it. The returned func releases it.
func lockFile(ctx context.Context, path string, progress io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: lock %s: %w", ErrBuild, path, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("%w: lock %s: %w", ErrBuild, path, err)
		}
		if !told {
			fmt.Fprintf(progress, "waiting for another harness process that is building binaries (%s)…\n", path)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%w: waiting for lock %s: %w", ErrBuild, path, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
