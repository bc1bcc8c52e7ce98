package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/topologies"
)

// minArtifactSpace is the free space a run wants for its artifacts: the
// suite log, JUnit, per-case evidence and the clusters' logs on failure.
const minArtifactSpace = 256 << 20

// runRun is `harness run`: bring up (or reuse) the topology, run the
// matrix, write JUnit and the summary, bring the clusters down unless kept.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harnessrun.Options
	topo := fs.String("topology", "topologies/default.yaml", "topology file, or the name of an embedded one (default)")
	fs.StringVar(&o.Artifacts, "artifacts", "_artifacts", "folder for junit.xml, summary.md and per-case evidence")
	fs.StringVar(&o.Run, "run", "", "regular expression selecting scenario IDs (see: harness list)")
	fs.StringVar(&o.Layers, "layer", "", "comma-separated layers to run (tls, authority, discovery, watch, registration, quic, invocation, resilience)")
	fs.StringVar(&o.Labels, "label", "", "comma-separated labels; a scenario runs when it carries one of them")
	fs.StringVar(&o.Workloads, "workload", "", "comma-separated workload kinds (statefulset, deployment, mixed)")
	fs.StringVar(&o.Trusts, "trust", "", "comma-separated trust sources (system, bundle, system-plus-bundle, grpc-override)")
	fs.StringVar(&o.Discoveries, "discovery", "", "comma-separated Stargate discovery modes (endpointslice, dns)")
	fs.BoolVar(&o.Keep, "keep", false, "leave the clusters up after the run (for another run or a look after a failure)")
	fs.Float64Var(&o.TimeScale, "time-scale", 1, "multiply every scenario deadline (slow machines raise it)")
	images := fs.String("images", "", "replace reference images: component=image,… (components: stargate, router, ingress, pylon, echo)")
	imageMap := imageBinaries{}
	fs.Var(imageMap, "image-binary", imageBinaryUsage)
	verbose := fs.Bool("v", false, "log progress at debug level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.Images, err = parseImages(*images); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %v", fs.Args())
	}
	if o.Topology, err = topologies.Load(*topo); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	o.TopologyRef = *topo
	// Before anything long: root, tools, ports, disk.
	spec := clusters.SpecOf(o.Topology)
	artifacts := local.Disk{Dir: o.Artifacts, Min: minArtifactSpace, Why: "the run's reports, logs and evidence", Hint: "pass --artifacts on a larger filesystem"}
	if err := local.Preflight(local.Options{}, &spec, artifacts); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.Stdout = stdout
	if o.Provider, err = embeddedProvider(imageMap); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	_, err = harnessrun.Run(ctx, o)
	if errors.Is(err, harnessrun.ErrFailed) {
		return err
	}
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// embeddedProvider is the embedded provider that `up` and `run` bring
// topologies up with: its process kubelets run the nvcf-ref image from the
// nvcf-ref beside this executable, plus the user's mappings.
func embeddedProvider(extra map[string]string) (clusters.Provider, error) {
	dir, err := harnessrun.BinDir()
	if err != nil {
		return nil, err
	}
	images := map[string]string{"nvcf-ref": filepath.Join(dir, harnessrun.ReferenceBinary)}
	maps.Copy(images, extra)
	return local.New(local.Options{Images: images}), nil
}
