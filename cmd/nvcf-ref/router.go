package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/nvcf/conformance/fixtures/router"
)

// routerRole is `nvcf-ref router`; flags and environment variables are listed in fixtures/README.md.
func routerRole() role {
	return role{name: "router", summary: "backend router: routes gRPC streams to the Stargate pod named by :authority", run: runRouter}
}

func runRouter(ctx context.Context, args []string, _, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("role", "router")
	ext := router.NewQUIC(log)
	cfg, err := router.ParseConfig(args, os.Getenv, ext.Flags)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err) // the flag list; main prints nothing for help
		}
		return err
	}
	return router.Run(ctx, cfg, log, ext.Addon)
}
