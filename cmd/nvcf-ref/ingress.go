package main

import (
	"context"
	"io"
	"os"

	"github.com/nvcf/conformance/fixtures/ingress"
)

// ingressRole is `nvcf-ref ingress`; flags and environment variables are listed in fixtures/README.md.
func ingressRole() role {
	return role{name: "ingress", summary: "TLS/h2 ingress on 50071 forwarding h2c to the router", run: runIngress}
}

func runIngress(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, err := ingress.ParseConfig(args, os.Getenv)
	return runParsed(stderr, cfg, err, func(cfg ingress.Config) error { return ingress.Run(ctx, cfg, roleLogger(stderr, "ingress")) })
}
