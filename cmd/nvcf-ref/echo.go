package main

import (
	"context"
	"io"

	"github.com/nvcf/conformance/fixtures/echo"
)

// echoRole is `nvcf-ref echo`: the OpenAI-style echo inference server.
func echoRole() role {
	return role{name: "echo", summary: "OpenAI-style echo inference server that Pylon fronts", run: runEcho}
}

func runEcho(ctx context.Context, args []string, _, stderr io.Writer) error {
	cfg, err := echo.ParseConfig(args)
	if err != nil {
		return err
	}
	cfg.Logger = roleLogger(stderr, "echo")
	return echo.Run(ctx, cfg, nil)
}
