package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/nvcf/conformance/fixtures/ingress"
)

// ingressRole is `nvcf-ref ingress`; flags and environment variables are listed in fixtures/README.md.
func ingressRole() role {
	return role{name: "ingress", summary: "TLS/h2 ingress on 50071 forwarding h2c to the router", run: runIngress}
}

func runIngress(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, err := ingress.ParseConfig(args, os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err) // the flag list; main prints nothing for help
		}
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("role", "ingress")
	return ingress.Run(ctx, cfg, log)
}
