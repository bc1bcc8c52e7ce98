// Command nvcf-ref is the multi-role binary of the reference components:
// stargate, router, ingress, pylon and echo. The role is the first argument,
// so one image serves every workload of the topology.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nvcf/conformance/fixtures/defects"
)

// role is one component: its name, a one-line summary and its entry point.
type role struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// roles is the explicit list of roles; add yours here.
func roles() []role {
	return []role{
		echoRole(),
		stargateRole(),
		routerRole(),
		ingressRole(),
		pylonRole(),
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "nvcf-ref:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errors.New("no role given")
	}
	for _, r := range roles() {
		if r.name == args[0] {
			// A defect switch is refused outside the test profile, before
			// the role starts (package fixtures/defects).
			on, err := defects.Activate(r.name, getenv)
			if err != nil {
				return err
			}
			if len(on) > 0 {
				roleLogger(stderr, r.name).Warn("DEFECTS SWITCHED ON (selftest): this process is deliberately broken", "defects", on)
			}
			return r.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown role %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: nvcf-ref <role> [flags]")
	for _, r := range roles() {
		fmt.Fprintf(w, "  %-9s %s\n", r.name, r.summary)
	}
}

// roleLogger is a role's structured logger on stderr.
func roleLogger(stderr io.Writer, name string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(stderr, nil)).With("role", name)
}

// runParsed runs a role whose configuration parse returned (cfg, err): a
// parse error ends the role, and for -h the error text is the flag list,
// printed here because main prints nothing for help.
func runParsed[C any](stderr io.Writer, cfg C, err error, run func(C) error) error {
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
		}
		return err
	}
	return run(cfg)
}
