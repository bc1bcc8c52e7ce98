package main

import (
	"context"
	"io"
	"os"

	"github.com/nvcf/conformance/fixtures/pylon"
)

// pylonRole is `nvcf-ref pylon`; flags and environment variables are listed in fixtures/README.md.
func pylonRole() role {
	return role{name: "pylon", summary: "worker agent: watches Stargates and registers with each", run: runPylon}
}

func runPylon(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := roleLogger(stderr, "pylon")
	ext := pylon.NewTunnel(log)
	cfg, err := pylon.ParseConfig(args, os.Getenv, ext.Flags)
	return runParsed(stderr, cfg, err, func(cfg pylon.Config) error { return pylon.Run(ctx, cfg, log, ext.Addon) })
}
