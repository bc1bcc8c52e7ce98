package proc

import (
	"context"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

func pidfdSignal(fd int, sig syscall.Signal) error { return unix.PidfdSendSignal(fd, sig, nil, 0) }

// waitFD polls the pidfd (readable once the process exited) in slices so a
// cancelled ctx ends the wait too.
func waitFD(ctx context.Context, fd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		ms := int(min(left, 200*time.Millisecond) / time.Millisecond)
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, max(ms, 1))
		if err == nil && n > 0 {
			return true
		}
	}
}
