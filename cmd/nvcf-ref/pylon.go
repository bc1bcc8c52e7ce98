package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/nvcf/conformance/fixtures/pylon"
)

// pylonRole is `nvcf-ref pylon`; flags and environment variables are listed in fixtures/README.md.
func pylonRole() role {
	return role{name: "pylon", summary: "worker agent: watches Stargates and registers with each", run: runPylon}
}

func runPylon(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("role", "pylon")
	ext := pylon.NewTunnel(log)
	cfg, err := pylon.ParseConfig(args, os.Getenv, ext.Flags)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err) // the flag list; main prints nothing for help
		}
		return err
	}
	return pylon.Run(ctx, cfg, log, ext.Addon)
}
