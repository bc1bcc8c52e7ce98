package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/nvcf/conformance/fixtures/stargate"
)

// stargateRole is `nvcf-ref stargate`; flags and environment variables are listed in fixtures/README.md.
func stargateRole() role {
	return role{name: "stargate", summary: "Stargate control plane: registry, WatchStargates, peer discovery (gRPC 50071 h2c)", run: runStargate}
}

func runStargate(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("role", "stargate")
	ext := stargate.NewTunnel(log)
	cfg, err := stargate.ParseConfig(args, os.Getenv, ext.Flags)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err) // the flag list; main prints nothing for help
		}
		return err
	}
	return stargate.Run(ctx, cfg, log, ext.Addon)
}
