package main

import (
	"context"
	"io"
	"os"

	"github.com/nvcf/conformance/fixtures/stargate"
)

// stargateRole is `nvcf-ref stargate`; flags and environment variables are listed in fixtures/README.md.
func stargateRole() role {
	return role{name: "stargate", summary: "Stargate control plane: registry, WatchStargates, peer discovery (gRPC 50071 h2c)", run: runStargate}
}

func runStargate(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := roleLogger(stderr, "stargate")
	ext := stargate.NewTunnel(log)
	cfg, err := stargate.ParseConfig(args, os.Getenv, ext.Flags)
	return runParsed(stderr, cfg, err, func(cfg stargate.Config) error { return stargate.Run(ctx, cfg, log, ext.Addon) })
}
