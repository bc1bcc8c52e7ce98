package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nvcf/conformance/clusters/kind"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runKind is `harness kind node-image`: build the kind provider's node
// image offline, once, into the cache.
func runKind(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "node-image" {
		return errors.New("kind: the subcommand is node-image (build the kind node image offline, once, into the cache)")
	}
	fs := flag.NewFlagSet("kind node-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	bin, err := harnessrun.BinDir()
	if err != nil {
		return err
	}
	img, err := kind.BuildNodeImage(ctx, kind.ImageOptions{BinDir: bin, Progress: stderr})
	if err != nil {
		return fmt.Errorf("kind node-image: %w", err)
	}
	fmt.Fprintf(stdout, "%s\t%s\n", img.Ref, img.Archive)
	return nil
}
