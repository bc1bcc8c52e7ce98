// Command harness brings up clusters, mints PKI, deploys the reference
// components and runs the conformance matrix. Each subcommand lives in its
// own file; main only dispatches.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nvcf/conformance/clusters/local"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// command is one subcommand: a name, a one-line summary and a run function
// that receives the arguments after the name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the explicit list of subcommands; add yours here.
func commands() []command {
	return []command{
		{"version", "print the harness version", runVersion},
		{"up", "bring up (or reuse) the clusters of a topology (--provider embedded or existing)", runUp},
		{"status", "show the running clusters: nodes, pods, load balancers, contexts", runStatus},
		{"down", "stop the clusters and remove everything they own", runDown},
		{"agent", "(internal) the process `up` starts to own an environment", runAgent},
		{"binaries", "download (SHA-256 checked) or build the embedded provider's control-plane binaries into the cache", runBinaries},
		{"pki", "mint or inspect good and deliberately bad PKI", runPKI},
		{"manifests", "print the rendered manifests of a topology and matrix cell", runManifests},
		{"run", "bring up (or reuse) a topology and run the conformance matrix", runRun},
		{"bench", "measure bring-up, idle memory per cluster, matrix wall time and tunnel latency (report in <artifacts>/bench.md)", runBench},
		{"gate", "apply the release gate file to a run's reports; exit 1 when it blocks", runGate},
		{"report", "diff two runs' reports, or render one again", runReport},
		{"list", "print the scenario catalogue without running it", runList},
		{"selftest", "re-create each registered defect of the reference components and prove its scenarios catch it", runSelftest},
		{"campaign", "run a seeded random schedule of faults while checking the invariants (convergence, fail-closed, invocations, no leaks); shrink a violating schedule", runCampaign},
		{"fault", "inject, list or clean up faults on clusters that are up", runFault},
		{"kind", "node-image: build the kind provider's node image offline, once, into the cache", runKind},
		{"docker", "run a command beside a Docker daemon: start one if none answers, stop it and restore the host after", runDocker},
	}
}

func main() {
	keepInheritedFiles()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := local.DiskFull(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "harness:", err)
	}
	os.Exit(exitCode(err))
}

// Exit codes: a conformance verdict and a harness failure must not look
// alike to CI.
const (
	exitOK          = 0
	exitNonconform  = 1 // the run completed and some case failed, or the release gate blocks
	exitHarnessFail = 2 // no verdict: bad input, bring-up failed, the run was cut short
)

func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case (errors.Is(err, harnessrun.ErrFailed) || errors.Is(err, harnessrun.ErrSelftestFailed)) && !errors.Is(err, harnessrun.ErrIncomplete),
		errors.Is(err, harnessrun.ErrGateFailed):
		return exitNonconform
	default:
		return exitHarnessFail
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: harness <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
}
