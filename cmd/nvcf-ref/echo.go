package main

import (
	"context"
	"flag"
	"io"
	"strings"

	"github.com/nvcf/conformance/fixtures/echo"
)

// echoRole is `nvcf-ref echo`: the OpenAI-style echo inference server.
func echoRole() role {
	return role{name: "echo", summary: "OpenAI-style echo inference server that Pylon fronts", run: runEcho}
}

func runEcho(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":8001", "TCP address of the HTTP server")
	models := fs.String("models", "echo", "comma-separated model ids to serve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ids []string
	for m := range strings.SplitSeq(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			ids = append(ids, m)
		}
	}
	return echo.Run(ctx, echo.Config{Listen: *listen, Models: ids, Logger: roleLogger(stderr, "echo")}, nil)
}
