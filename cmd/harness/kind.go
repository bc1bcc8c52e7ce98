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

	"github.com/nvcf/conformance/clusters/kind"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runKind is `harness kind node-image`: build the kind provider's node
// image offline, once, into the cache.
func runKind(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		return runKindServe(ctx, args[1:], stderr)
	}
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

// runKindServe is `harness kind serve --state DIR`, which the kind
// provider's up starts detached: the load balancers and external DNS of the
// environment in DIR, until SIGTERM (down). Not for users, so not listed.
func runKindServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("kind serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("state", "", "the environment's folder")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("kind serve: --state DIR is required")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	return kind.Serve(ctx, *dir, slog.New(slog.NewTextHandler(stderr, nil)))
}
