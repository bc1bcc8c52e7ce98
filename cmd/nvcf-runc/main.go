// Command nvcf-runc is the OCI runtime shim that Docker runs containers
// through where the machine's capability bounding set lacks
// CAP_SYS_RESOURCE: runc would hand that capability to a privileged
// container and fail with "unable to apply caps: operation not permitted".
// The shim removes it from every capability list of the spec it is given,
// the bundle's config.json (--bundle, for create and run) or the process
// spec (--process, for exec), and then execs runc with the same arguments.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/nvcf/conformance/cmd/nvcf-runc/internal/capdrop"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nvcf-runc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	runc, err := exec.LookPath("runc")
	if err != nil {
		return fmt.Errorf("runc not found in PATH: %w", err)
	}
	for _, f := range capdrop.SpecFiles(args) {
		if err := capdrop.DropFromFile(f, capdrop.SysResource); err != nil {
			return err
		}
	}
	return syscall.Exec(runc, append([]string{filepath.Base(runc)}, args...), os.Environ())
}
