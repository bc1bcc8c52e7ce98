package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/nvcf/conformance/clusters/local"
)

// version and commit are set by `make build` with -ldflags -X; a plain
// `go build` falls back to the VCS stamp Go writes, when it writes one.
var version, commit = "dev", ""

// runVersion is `harness version`: the harness's own version and commit, and
// the versions of what it runs.
func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version: unexpected arguments %v", args)
	}
	k8s, etcd, coredns := local.Versions()
	_, err := fmt.Fprintf(stdout, "harness %s\ncommit %s\ngo %s\nkubernetes %s\netcd %s\ncoredns %s\n",
		version, harnessCommit(), runtime.Version(), k8s, etcd, coredns)
	return err
}

// harnessCommit is the commit the harness was built from: the one `make
// build` stamps, else Go's VCS stamp ("(modified)" for a dirty tree).
func harnessCommit() string {
	if commit != "" {
		return commit
	}
	c, modified := buildCommit()
	if modified {
		c += " (modified)"
	}
	return c
}

// buildCommit reads the VCS stamp Go writes into binaries built in a checkout.
func buildCommit() (commit string, modified bool) {
	commit = "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return commit, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return commit, modified
}
