package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"

	"github.com/nvcf/conformance/clusters/local"
)

// runAgent is the hidden `harness agent --state DIR`: the long-lived
// process that `harness up` starts detached and that owns the environment.
func runAgent(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("state", "", "the environment's state folder (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("agent: --state is required (this command is started by `harness up`)")
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return local.RunAgent(ctx, *dir, log)
}
