package scenarios

import (
	"errors"

	"golang.org/x/sys/unix"
)

// WatchOwner calls stop once process pid (the `harness run` that started
// the suite, RunConfig.OwnerPID) has exited, or at once when it is gone
// already: a suite whose runner was killed stops as on Ctrl-C, undoing its
// faults, instead of running on unattended. pid 0 watches nothing.
func WatchOwner(pid int, stop func()) error {
	if pid <= 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		stop()
		return nil
	}
	if err != nil {
		return err
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				stop()
				return
			}
		}
	}()
	return nil
}
