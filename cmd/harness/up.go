package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/harness/model/topology"
)

// runUp is `harness up`: bring up (or reuse) the clusters of a topology on
// the embedded provider and print their kubeconfig contexts.
func runUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "topologies/default.yaml", "topology file")
	recreate := fs.Bool("recreate", false, "replace a running environment whose topology changed (default: refuse)")
	images := imageFlag{}
	fs.Var(images, "image", "map an image to a local binary, name=path (repeatable; default: nvcf-ref → a fresh build of ./cmd/nvcf-ref)")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("up: unexpected arguments %v", fs.Args())
	}
	t, err := topology.Load(*topo)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	log := cliLogger(stderr, *verbose)
	p, err := localProvider(ctx, images, stderr, log)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	opts := []clusters.UpOption{clusters.WithProgress(stderr), clusters.WithLogger(log)}
	if *recreate {
		opts = append(opts, clusters.WithRecreate())
	}
	env, err := p.Up(ctx, clusters.SpecOf(t), opts...)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	fmt.Fprintf(stdout, "kubeconfig: %s\n", env.Kubeconfig)
	for _, c := range env.Clusters {
		fmt.Fprintf(stdout, "context %-12s %s\n", c.Context, c.APIServer)
	}
	fmt.Fprintf(stdout, "external DNS: %s\n", env.DNS)
	fmt.Fprintf(stdout, "try: kubectl --kubeconfig %s --context %s get pods -A\n", env.Kubeconfig, env.Clusters[0].Context)
	return nil
}

// localProvider returns the embedded provider with its image map: the
// given one, plus nvcf-ref built from this module when it is not mapped.
func localProvider(ctx context.Context, images map[string]string, progress io.Writer, log *slog.Logger) (clusters.Provider, error) {
	if _, ok := images["nvcf-ref"]; !ok {
		bin, err := buildRef(ctx, progress)
		if err != nil {
			return nil, err
		}
		images["nvcf-ref"] = bin
	}
	return local.New(local.Options{Images: images}), nil
}

// buildRef builds ./cmd/nvcf-ref of the module around the working folder
// into the cache's bin/ (Go's build cache makes a rebuild quick).
func buildRef(ctx context.Context, progress io.Writer) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(local.CacheDir(), "bin", "nvcf-ref")
	fmt.Fprintf(progress, "building nvcf-ref from %s…\n", root)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/nvcf-ref")
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build nvcf-ref: %w\n%s", err, buf.String())
	}
	return out, nil
}

// moduleRoot finds the folder of this project's go.mod above the working folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/nvcf/conformance\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the conformance module, so nvcf-ref cannot be built; run from the repository or pass --image nvcf-ref=/path/to/nvcf-ref")
		}
		dir = parent
	}
}

// imageFlag collects --image name=path.
type imageFlag map[string]string

func (f imageFlag) String() string { return fmt.Sprint(map[string]string(f)) }

func (f imageFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=path, got %q", v)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	f[name] = abs
	return nil
}

func cliLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// runBinaries is `harness binaries`: build (or verify) the embedded
// provider's control-plane binaries in the cache, with progress; CI runs it
// before the tests so that the long cold build is not charged to one test.
func runBinaries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("binaries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	set, err := local.EnsureBinaries(ctx, stderr)
	if err != nil {
		return fmt.Errorf("binaries: %w", err)
	}
	for _, p := range []string{set.APIServer, set.ControllerManager, set.Scheduler, set.Kubectl, set.Etcd, set.CoreDNS} {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
