package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runGate is `harness gate`: apply the committed release gate to a run's
// reports; exit 0 when the gate passes, 1 when it blocks, 2 when it cannot
// be applied (no run report, a bad gate file).
func runGate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "gates/release.yaml", "the gate file: required cells and scenarios, quarantined cases, flaky policy")
	artifacts := fs.String("artifacts", "_artifacts", "the artifacts folder of the run to judge (holds report.json)")
	date := fs.String("date", "", "judge quarantine expiries as of this day (YYYY-MM-DD; default today, UTC)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gate: unexpected arguments %v", fs.Args())
	}
	now := time.Now()
	if *date != "" {
		d, err := time.Parse(time.DateOnly, *date)
		if err != nil {
			return fmt.Errorf("gate: --date %q is not a date like 2026-12-31", *date)
		}
		now = d
	}
	v, err := harnessrun.ApplyGate(*artifacts, *file, now)
	if v != nil {
		fmt.Fprint(stdout, v.Text())
	}
	switch {
	case errors.Is(err, harnessrun.ErrGateFailed):
		return err
	case err != nil:
		return fmt.Errorf("gate: %w", err)
	}
	return nil
}
