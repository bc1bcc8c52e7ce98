package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/topologies"
)

// runUp is `harness up`: bring up (or reuse) the clusters of a topology on
// the chosen provider and print their kubeconfig contexts.
func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "topologies/default.yaml", "topology file")
	recreate := fs.Bool("recreate", false, "replace a running environment whose topology changed (default: refuse)")
	images := imageBinaries{}
	fs.Var(images, "image-binary", imageBinaryUsage)
	verbose := fs.Bool("v", false, "log at debug level")
	var pf providerFlags
	pf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("up: unexpected arguments %v", fs.Args())
	}
	if err := pf.check(); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	t, err := topologies.Load(*topo)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	spec := clusters.SpecOf(t)
	// Before building anything: root, tools, ports, disk.
	if err := pf.preflight(&spec); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	log := cliLogger(stderr, *verbose)
	p, err := pf.provider(images)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	opts := []clusters.UpOption{clusters.WithProgress(stderr), clusters.WithLogger(log)}
	if *recreate {
		opts = append(opts, clusters.WithRecreate())
	}
	env, err := p.Up(ctx, spec, opts...)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	fmt.Fprintf(stdout, "kubeconfig: %s\n", env.Kubeconfig)
	for _, c := range env.Clusters {
		fmt.Fprintf(stdout, "context %-12s %s\n", c.Context, c.APIServer)
	}
	if env.DNS.IsValid() {
		fmt.Fprintf(stdout, "external DNS: %s\n", env.DNS)
	}
	fmt.Fprintf(stdout, "try: kubectl --kubeconfig %s --context %s get pods -A\n", env.Kubeconfig, env.Clusters[0].Context)
	return nil
}

const imageBinaryUsage = "embedded provider: run image repository `REPO` from local binary PATH, REPO=PATH; comma-separated or repeated (nvcf-ref defaults to the nvcf-ref beside this executable)"

// imageBinaries collects --image-binary REPO=PATH[,REPO=PATH…] (repeatable;
// paths are made absolute), the one flag that maps images to binaries in
// both `up` and `run`.
type imageBinaries map[string]string

func (f imageBinaries) String() string { return fmt.Sprint(map[string]string(f)) }

// args renders f as the flags that set it, in a stable order (a repro
// command runs the same binaries).
func (f imageBinaries) args() []string {
	var out []string
	for _, repo := range slices.Sorted(maps.Keys(f)) {
		out = append(out, "--image-binary", repo+"="+f[repo])
	}
	return out
}

func (f imageBinaries) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		repo, path, ok := strings.Cut(kv, "=")
		if !ok || repo == "" || path == "" {
			return fmt.Errorf("%q is not REPO=/path/to/binary", kv)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		f[repo] = abs
	}
	return nil
}

func cliLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// runBinaries is `harness binaries`: download (or, when the releases are
// unreachable, build) the embedded provider's control-plane binaries into
// the cache, with progress, and kubectl after them with --kubectl; CI runs
// it before the tests so that a long cold build is not charged to one test.
func runBinaries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("binaries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	withKubectl := fs.Bool("kubectl", false, "also kubectl of the same version, for looking inside the clusters (about 1 min more when built)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := local.Preflight(local.Options{}, nil); err != nil {
		return fmt.Errorf("binaries: %w", err)
	}
	set, err := local.EnsureBinaries(ctx, stderr)
	if err != nil {
		return fmt.Errorf("binaries: %w", err)
	}
	paths := []string{set.APIServer, set.ControllerManager, set.Scheduler, set.Etcd, set.CoreDNS}
	if *withKubectl {
		kubectl, err := local.EnsureKubectl(ctx, stderr)
		if err != nil {
			return fmt.Errorf("binaries: %w", err)
		}
		paths = append(paths, kubectl)
	}
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
