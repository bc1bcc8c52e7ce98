package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/fixtures/defects"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/topologies"
)

// runSelftest is `harness selftest`: bring a fresh environment up, run a
// defect-free baseline, then each selected defect with its scenarios, and
// write the detection matrix.
func runSelftest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harnessrun.SelftestOptions
	topo := fs.String("topology", "topologies/default.yaml", "topology file, or the name of an embedded one (default)")
	fs.StringVar(&o.Artifacts, "artifacts", "_artifacts/selftest", "folder for the detection matrix (junit.xml, detection.md, detection.json, summary.md) and each run's reports")
	epic := fs.Bool("epic", false, "only the defects of the epic's five items (the CI subset)")
	names := fs.String("defect", "", "comma-separated defect names (default: every registered defect)")
	list := fs.Bool("list", false, "print the registered defects and exit")
	rejudge := fs.String("rejudge", "", "judge again, with the current registry, the results an earlier selftest left in this folder (no clusters)")
	fs.BoolVar(&o.Keep, "keep", false, "leave the clusters up afterwards")
	fs.Float64Var(&o.TimeScale, "time-scale", 1, "multiply every scenario deadline (slow machines raise it)")
	verbose := fs.Bool("v", false, "log progress at debug level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("selftest: unexpected arguments %v", fs.Args())
	}
	var sel []string
	if *names != "" {
		sel = strings.Split(*names, ",")
	}
	var err error
	if o.Defects, err = defects.Select(sel, *epic); err != nil {
		return fmt.Errorf("selftest: --defect: %w", err)
	}
	if *list {
		return listDefects(stdout, o.Defects)
	}
	if len(o.Defects) == 0 {
		return errors.New("selftest: --defect and --epic select no defect")
	}
	if err := harnessrun.ErrOnlyCampaign(o.Defects); err != nil {
		return fmt.Errorf("selftest: --defect: %w", err)
	}
	if *rejudge != "" {
		m, err := harnessrun.Rejudge(*rejudge, o.Defects)
		if err != nil {
			return fmt.Errorf("selftest: %w", err)
		}
		_ = m.Text(stdout)
		if !m.OK() {
			return fmt.Errorf("%w: %d of %d defects not caught or baseline red", harnessrun.ErrSelftestFailed, len(m.Gaps()), len(m.Defects))
		}
		return nil
	}
	if o.Topology, err = topologies.Load(*topo); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	o.TopologyRef = *topo
	spec := clusters.SpecOf(o.Topology)
	if err := local.Preflight(local.Options{}, &spec); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.Stdout = stdout
	if o.Provider, err = embeddedProvider(nil); err != nil {
		return fmt.Errorf("selftest: %w", err)
	}
	_, err = harnessrun.Selftest(ctx, o)
	if err != nil && !errors.Is(err, harnessrun.ErrSelftestFailed) {
		return fmt.Errorf("selftest: %w", err)
	}
	return err
}

// listDefects prints the registry: name, role, epic item, what it
// re-creates and the scenarios that should catch it (for a defect only a
// fault sequence reveals, the campaign invariant and the sequence).
func listDefects(w io.Writer, ds []defects.Defect) error {
	for _, d := range ds {
		epic := "-"
		if d.Epic > 0 {
			epic = fmt.Sprint(d.Epic)
		}
		fmt.Fprintf(w, "%-44s %-8s epic %s  %s\n    site %s; ", d.Name, d.Role, epic, d.Recreates, d.Site)
		if d.ByCampaign() {
			fmt.Fprintf(w, "caught by harness campaign, invariant %s (not by selftest), after: %s\n", d.Campaign, d.Sequence)
			continue
		}
		fmt.Fprintf(w, "caught by %s", strings.Join(d.Scenarios, ", "))
		if len(d.Reasons) > 0 {
			fmt.Fprintf(w, " with %s", strings.Join(d.Reasons, "|"))
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintf(w, "%d defects\n", len(ds))
	return err
}
