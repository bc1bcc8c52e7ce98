package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/harness/bench"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runBench is `harness bench`: bring-up time, idle memory per cluster,
// matrix wall time and tunnel latency against direct calls, in one run,
// reported in <artifacts>/bench.md.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.Options
	mf := matrixFlags(fs, &o.Run)
	fs.DurationVar(&o.Idle, "idle", 0, "how long the fresh clusters idle before their memory is read (default 20s)")
	fs.IntVar(&o.Requests, "requests", 0, "timed invocations per path, tunnel and direct (default 300)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %v", fs.Args())
	}
	if err := mf.prepare(&o.Run, stdout, stderr); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	o.Memory = func(env string) ([]local.ProcessMemory, error) { return local.Memory(local.Options{}, env) }
	_, err := bench.Run(ctx, o)
	if err != nil && !errors.Is(err, harnessrun.ErrFailed) {
		return fmt.Errorf("bench: %w", err)
	}
	return err
}
