// Command nvcf-pause is the pod sandbox's process in the kind provider's
// node image: it holds the pod's namespaces open, reaps the zombies that
// end up with it as PID 1 of a shared process namespace, and exits cleanly
// on SIGINT or SIGTERM. Built statically, it is the image's only file.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
