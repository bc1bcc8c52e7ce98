package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	harnessrun "github.com/nvcf/conformance/harness/run"
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
	mf := matrixFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %v", fs.Args())
	}
	if err := mf.prepare(&o, stdout, stderr); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	_, err := harnessrun.Run(ctx, o)
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
