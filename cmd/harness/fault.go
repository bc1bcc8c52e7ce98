package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/existing"
	"github.com/nvcf/conformance/clusters/kind"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/topologies"
)

// runFault is `harness fault`: inject a fault by hand on clusters that are
// up, list the active ones, or clean up what a killed run left.
func runFault(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		faultUsage(stderr)
		return errors.New("fault: name a subcommand: inject, list, cleanup or kinds")
	}
	switch args[0] {
	case "inject":
		return runFaultInject(ctx, args[1:], stdout, stderr)
	case "list":
		return runFaultList(ctx, args[1:], stdout, stderr)
	case "cleanup":
		return runFaultCleanup(ctx, args[1:], stdout, stderr)
	case "kinds":
		_, err := fmt.Fprintln(stdout, faults.ParamHelp)
		return err
	case "-h", "--help", "help":
		faultUsage(stderr)
		return nil
	}
	faultUsage(stderr)
	return fmt.Errorf("fault: unknown subcommand %q", args[0])
}

func faultUsage(w io.Writer) {
	fmt.Fprintln(w, `usage: harness fault inject --kind KIND --target TARGET [--duration 30s] [--param k=v]...
       harness fault list     (faults active now, from the state folder)
       harness fault cleanup  (undo faults whose process was killed)
       harness fault kinds    (targets and params of each kind)
--provider existing: the environment of a run on existing clusters (faults that need a network seam are refused)`)
}

// faultFlags are the flags every fault subcommand shares.
type faultFlags struct {
	topology, state, kubeconfig, netns string
	verbose                            bool
	provider                           providerFlags
}

func (f *faultFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.topology, "topology", "topologies/default.yaml", "topology file (names the clusters and the state folder)")
	fs.StringVar(&f.state, "state", "", "state folder (default $XDG_STATE_HOME/nvcf-harness/<topology name>)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig with one context per cluster (default <state>/kubeconfig)")
	fs.StringVar(&f.netns, "netns", "", "network namespace the environment's host side lives in (default: this one)")
	fs.BoolVar(&f.verbose, "v", false, "log at debug level")
	fs.StringVar(&f.provider.name, "provider", providerEmbedded, "where the environment's clusters come from: embedded (the default), kind or existing (as `harness run --provider` was given; its state folder is used)")
}

// resolve loads the topology (when needed) and fills the defaults.
func (f *faultFlags) resolve(needTopology bool) (*topology.Topology, error) {
	if err := f.provider.check(); err != nil {
		return nil, fmt.Errorf("fault: %w", err)
	}
	var t *topology.Topology
	if needTopology || f.state == "" {
		var err error
		if t, err = topologies.Load(f.topology); err != nil {
			return nil, fmt.Errorf("fault: %w (pass --topology)", err)
		}
	}
	if f.state == "" {
		f.state = f.provider.stateDir(t.Name)
	}
	if f.kubeconfig == "" {
		f.kubeconfig = filepath.Join(f.state, "kubeconfig")
	}
	return t, nil
}

// environment is the running environment of the state folder, as its
// provider describes it: where its clusters' networks and DNS are, or, on
// existing clusters, that it knows none. An embedded environment that is
// not there, beside a run on existing clusters of the same name, says to
// pass --provider existing rather than assume the embedded provider.
func (f *faultFlags) environment(ctx context.Context) (*clusters.Environment, error) {
	root, name := filepath.Dir(f.state), filepath.Base(f.state)
	switch f.provider.name {
	case providerExisting:
		return existing.New(existing.Options{StateRoot: root}).Status(ctx, name)
	case providerKind:
		return kind.New(kind.Options{StateRoot: root}).Status(ctx, name)
	}
	env, err := local.New(local.Options{StateRoot: root}).Status(ctx, name)
	if errors.Is(err, clusters.ErrNotFound) {
		if names, _ := existing.Names(existing.Options{}); slices.Contains(names, name) {
			return nil, fmt.Errorf("%w; environment %q runs on existing clusters (harness run --provider existing): pass --provider existing", err, name)
		}
	}
	return env, err
}

func (f *faultFlags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// paramFlag collects repeated --param key=value.
type paramFlag map[string]string

func (p paramFlag) String() string { return fmt.Sprint(map[string]string(p)) }
func (p paramFlag) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("param %q: want key=value", kv)
		}
		p[k] = val
	}
	return nil
}

func runFaultInject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fault inject", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ff faultFlags
	ff.register(fs)
	kind := fs.String("kind", "", "fault kind (harness fault kinds)")
	target := fs.String("target", "", "what the fault hits (harness fault kinds)")
	duration := fs.Duration("duration", 30*time.Second, "how long the fault stays (0: until Ctrl-C)")
	start := fs.Duration("start", 0, "delay before injecting")
	params := paramFlag{}
	fs.Var(params, "param", "key=value parameter of the kind (repeatable, or comma-separated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kind == "" || *target == "" {
		return errors.New("fault inject: --kind and --target are required (see `harness fault kinds`)")
	}
	if _, err := ff.resolve(false); err != nil {
		return err
	}
	log := ff.logger(stderr)
	if cleaned, err := faults.CleanupLeftovers(ctx, ff.state, log); err != nil {
		return fmt.Errorf("fault inject: clean up leftovers first: %w", err)
	} else if len(cleaned) > 0 {
		fmt.Fprintf(stdout, "removed %d fault(s) left by a killed run\n", len(cleaned))
	}
	running, err := ff.environment(ctx)
	if err != nil {
		return fmt.Errorf("fault inject: %w", err)
	}
	env := faults.ParamEnv{Environment: running, Kubeconfig: ff.kubeconfig, LookupLB: faults.LBLookup(ff.kubeconfig), Netns: ff.netns}
	f, err := faults.FromParams(ctx, faults.Kind(*kind), *target, params, env)
	if err != nil {
		return fmt.Errorf("fault inject: %w", err)
	}
	f.Start, f.Duration = *start, *duration
	rec := faults.NewRecorder(ff.state, log)
	h, err := faults.Start(ctx, f, rec)
	if errors.Is(err, faults.ErrNoSeam) {
		return fmt.Errorf("fault inject: refused on the %s provider (a run skips such cases with this reason): %w", ff.provider.name, err)
	}
	if err != nil {
		return err
	}
	until := "Ctrl-C"
	if f.Duration > 0 {
		until = f.Duration.String() + " or Ctrl-C"
	}
	fmt.Fprintf(stdout, "injected %s: %s %s on %s; undone after %s\n", h.ID(), f.Kind(), f.Action.Describe(), f.Target, until)
	select {
	case <-h.Done():
	case <-ctx.Done():
	}
	if err := h.Stop(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "undone %s\n", h.ID())
	return nil
}

// parseStateFlags parses the flags of a subcommand that only needs the
// state folder (list, cleanup).
func parseStateFlags(name string, args []string, stderr io.Writer) (*faultFlags, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ff faultFlags
	ff.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if _, err := ff.resolve(false); err != nil {
		return nil, err
	}
	return &ff, nil
}

func runFaultList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	ff, err := parseStateFlags("fault list", args, stderr)
	if err != nil {
		return err
	}
	es, err := faults.List(ff.state)
	if err != nil {
		return fmt.Errorf("fault list: %w", err)
	}
	if len(es) == 0 {
		_, err := fmt.Fprintln(stdout, "no active faults")
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKIND\tTARGET\tSTARTED\tUNTIL\tPID\tSTATE\tPARAMS")
	for _, e := range es {
		until, state := "-", "active"
		if !e.Until.IsZero() {
			until = e.Until.Format(time.TimeOnly)
		}
		if !e.Alive {
			state = "leftover (run `harness fault cleanup`)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.ID, e.Name, e.Kind, e.Target, e.Started.Format(time.TimeOnly), until, e.PID, state, e.Params)
	}
	return tw.Flush()
}

func runFaultCleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	ff, err := parseStateFlags("fault cleanup", args, stderr)
	if err != nil {
		return err
	}
	cleaned, err := faults.CleanupLeftovers(ctx, ff.state, ff.logger(stderr))
	for _, e := range cleaned {
		fmt.Fprintf(stdout, "removed %s %s (%s) left by pid %d\n", e.ID, e.Kind, e.Target, e.PID)
	}
	if err != nil {
		return fmt.Errorf("fault cleanup: %w", err)
	}
	if len(cleaned) == 0 {
		fmt.Fprintln(stdout, "nothing to clean up")
	}
	return nil
}
