// Package flock serialises the fault injector's writers across processes:
// the fault journal and the nftables table are changed by every process
// that injects or undoes a fault.
package flock

import (
	"fmt"
	"os"
	"syscall"
)

// Do runs f holding an exclusive flock on path (created 0600 when
// missing); what names the lock in errors. The lock goes with the file's
// close, and with the process if it dies.
func Do(path, what string, f func() error) error {
	l, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open the %s lock: %w", what, err)
	}
	defer l.Close()
	if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock the %s (%s): %w", what, path, err)
	}
	return f()
}
