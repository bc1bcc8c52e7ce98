package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/harness/bench"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runBench is `harness bench`: bring-up time, idle memory per cluster,
// matrix wall time and tunnel latency against direct calls, in one run,
// reported in <artifacts>/bench.md. With --tunnel-vs-real it brings up no
// cluster: it times the reference tunnel against NVCF's real one (the
// binaries in --nvcf-bin-dir) on loopback, into the same report file.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.Options
	mf := matrixFlags(fs, &o.Run)
	fs.DurationVar(&o.Idle, "idle", 0, "how long the fresh clusters idle before their memory is read (default 20s)")
	fs.IntVar(&o.Requests, "requests", 0, "timed invocations per path, tunnel and direct (default 300; 500 with --tunnel-vs-real)")
	tunnelVsReal := fs.Bool("tunnel-vs-real", false, "no clusters: time the reference tunnel (reference Stargate + Pylon) against NVCF's real one (stargate + pylon from --nvcf-bin-dir) and direct calls to the echo server, on loopback")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %v", fs.Args())
	}
	if *tunnelVsReal {
		if o.Run.NVCFBinDir == "" {
			return fmt.Errorf("bench --tunnel-vs-real: no NVCF binaries: pass --nvcf-bin-dir or set %s", nvcfbuild.BinDirEnv)
		}
		level := slog.LevelInfo
		if *mf.verbose {
			level = slog.LevelDebug
		}
		_, err := bench.RunTunnelVsReal(ctx, bench.TunnelVsRealOptions{BinDir: o.Run.NVCFBinDir, Requests: o.Requests,
			Artifacts: o.Run.Artifacts, Stdout: stdout, Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))})
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		return nil
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
