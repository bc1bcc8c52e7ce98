// Command hello is the one binary of the image dockerd's root test runs
// privileged: it prints its capability bounding set and exits.
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "CapBnd:") {
			fmt.Println(l)
		}
	}
}
