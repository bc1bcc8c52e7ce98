// Command nvcf-ref is the multi-role binary of the reference components:
// stargate, router, ingress, pylon, echo and worker-auth-gateway. The role is the first argument,
// so one image serves every workload of the topology. Where a manifest
// passes only the real component's flags (the nvcf manifest flavor, which
// real images run unchanged), the role comes from $NVCF_REF_ROLE instead.
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
	"strings"
	"syscall"

	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/wire/reason"
)

// role is one component: its name (also the reason.Origin of its
// refusals), a one-line summary and its entry point.
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
		gatewayRole(),
	}
}

// RoleEnv names the variable that selects the role when the first argument
// is a flag: real images have one binary per component and take no role
// argument, so manifests written for them name the role this way.
const RoleEnv = "NVCF_REF_ROLE"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, withRole(os.Args[1:], os.Getenv(RoleEnv)), os.Getenv, os.Stdout, os.Stderr)
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
			err = r.run(ctx, args[1:], stdout, stderr)
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				m := reason.MessageOf(err, reason.Origin(r.name))
				if werr := writeTermination(getenv(reason.TerminationPathEnv), m); werr != nil {
					err = errors.Join(err, werr)
				}
			}
			return err
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown role %q", args[0])
}

// withRole puts role in front of args when args do not start with one
// (they are empty or start with a flag) and role is set.
func withRole(args []string, role string) []string {
	if role == "" || (len(args) > 0 && !strings.HasPrefix(args[0], "-")) {
		return args
	}
	return append([]string{role}, args...)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: nvcf-ref <role> [flags]   (or "+RoleEnv+"=<role> nvcf-ref [flags])")
	for _, r := range roles() {
		fmt.Fprintf(w, "  %-19s %s\n", r.name, r.summary)
	}
}

// writeTermination writes m to path (the container's
// terminationMessagePath, from reason.TerminationPathEnv), so the kubelet
// reports the typed refusal as the terminated state's message. An empty
// path writes nothing: outside a pod there is no such file.
func writeTermination(path string, m reason.Message) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(m.Encode()), 0o644); err != nil {
		return fmt.Errorf("write the termination message to %s (%s): %w", path, reason.TerminationPathEnv, err)
	}
	return nil
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
