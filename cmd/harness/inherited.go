package main

import (
	"os"
	"strconv"
	"syscall"
)

// keepInheritedFiles marks every file descriptor above stderr that this
// process inherited close-on-exec. Go opens its own files that way, not
// those it was handed: a lock held by `flock LOCK harness …` would
// otherwise pass to every process the harness starts, and the detached
// ones (the embedded agent, the kind provider's serving process and Docker
// daemon) would hold it long after the run ended, blocking the next one.
func keepInheritedFiles() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return // no /proc: nothing to learn the descriptors from
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
