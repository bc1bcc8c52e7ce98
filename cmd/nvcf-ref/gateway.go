package main

import (
	"context"
	"io"
	"os"

	"github.com/nvcf/conformance/fixtures/workerauth"
)

// gatewayRole is `nvcf-ref worker-auth-gateway`: the worker-auth gateway a
// Stargate asks through --worker-auth-endpoint, with the flags and gRPC
// API of NVCF's stand-in, stargate-worker-auth-gateway.
func gatewayRole() role {
	return role{name: "worker-auth-gateway", summary: "llm_gateway.LlmGateway/AuthLlmWorker: worker tokens to routing keys (--worker TOKEN=ROUTING_KEY)", run: runGateway}
}

func runGateway(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, err := workerauth.ParseConfig(args, os.Getenv)
	return runParsed(stderr, cfg, err, func(c workerauth.Config) error {
		return workerauth.Run(ctx, c, roleLogger(stderr, "worker-auth-gateway"))
	})
}
