package main

import (
	"context"
	"io"
	"os"

	"github.com/nvcf/conformance/fixtures/router"
)

// routerRole is `nvcf-ref router`; flags and environment variables are listed in fixtures/README.md.
func routerRole() role {
	return role{name: "router", summary: "backend router: routes gRPC streams to the Stargate pod named by :authority", run: runRouter}
}

func runRouter(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := roleLogger(stderr, "router")
	ext := router.NewQUIC(log)
	cfg, err := router.ParseConfig(args, os.Getenv, ext.Flags)
	return runParsed(stderr, cfg, err, func(cfg router.Config) error { return router.Run(ctx, cfg, log, ext.Addon) })
}
