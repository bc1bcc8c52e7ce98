package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/harness/campaignrun"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/model/matrix"
)

// runCampaign is `harness campaign`: a seeded random schedule of faults
// (or a schedule file) run on one cell while the invariants are checked.
func runCampaign(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("campaign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := campaignrun.Options{}
	mf := matrixFlags(fs, &o.Run)
	fs.Lookup("artifacts").DefValue = "_artifacts/campaign"
	_ = fs.Set("artifacts", "_artifacts/campaign")
	seed := fs.Int64("seed", 0, "seed of the random schedule (0: drawn from the clock, and printed)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Minute, "how long faults are injected (the window every fault starts and ends in)")
	fs.DurationVar(&o.Settle, "settle", 60*time.Second, "convergence bound (I1): once every fault has healed, every Pylon must be held again within it; the campaign ends this long after its window")
	kinds := fs.String("kinds", "all", "comma-separated fault kinds to draw from ("+campaign.KindNames()+")")
	fs.StringVar(&o.ScheduleFile, "schedule", "", "replay this schedule file (schedule.json of an earlier campaign) instead of drawing one")
	fs.IntVar(&o.Pylons, "pylons", 2, "campaign Pylons (echo workers) beside the cell's own, each of which must converge; raise it to measure scale")
	fs.IntVar(&o.BadPylons, "bad-pylons", 1, "Pylons that trust only an unrelated CA and must never register (I2)")
	fs.BoolVar(&o.Scale, "scale", false, "measure the Pylons' cold registration and their re-convergence after a rollout of every region")
	fs.BoolVar(&o.Shrink, "shrink", true, "on a violation, search for a smaller schedule that still violates the invariant, replaying candidates")
	fs.IntVar(&o.MaxTrials, "max-trials", 16, "bound on the replays the shrinking runs")
	dry := fs.Bool("dry-run", false, "print the schedule (and write it to the artifacts folder) without running it")
	defect := fs.String("defect", "", "switch a registered defect of the reference components on (self-validation; see harness selftest --list)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("campaign: unexpected arguments %v", fs.Args())
	}
	switch {
	case o.Run.Run != "" || o.Run.Layers != "" || o.Run.Labels != "":
		return errors.New("campaign: --run, --layer and --label select cases; a campaign runs none (pick its cell with --workload, --trust, --discovery and --profile)")
	case o.Pylons < 1:
		return fmt.Errorf("campaign: --pylons %d: want 1 or more", o.Pylons)
	case o.BadPylons < 0:
		return fmt.Errorf("campaign: --bad-pylons %d: want 0 or more", o.BadPylons)
	case o.ScheduleFile == "" && o.Duration < 10*time.Second:
		return fmt.Errorf("campaign: --duration %s: want at least 10s", o.Duration)
	case o.Settle < 5*time.Second:
		return fmt.Errorf("campaign: --settle %s: want at least 5s (convergence takes a few heartbeats)", o.Settle)
	}
	var err error
	if o.Kinds, err = campaign.ParseKinds(*kinds); err != nil {
		return fmt.Errorf("campaign: --kinds: %w", err)
	}
	if *defect != "" {
		d, ok := defects.Lookup(defects.Name(*defect))
		if !ok {
			return fmt.Errorf("campaign: --defect %q is not a registered defect (see harness selftest --list)", *defect)
		}
		o.Defect = manifests.Defect{Role: d.Role, Names: string(d.Name)}
	}
	o.Run.Environments = 1
	if err := mf.prepare(&o.Run, stdout, stderr); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	if o.Cell, err = campaignCell(&o.Run); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	o.Seed = *seed
	if o.Seed == 0 && o.ScheduleFile == "" {
		o.Seed = time.Now().UnixNano() % 1_000_000
		if o.Seed == 0 {
			o.Seed = 1
		}
	}
	if mf.provider.name == providerEmbedded {
		env := o.Run.Topology.Name
		o.Memory = func() ([]local.ProcessMemory, error) { return local.Memory(local.Options{}, env) }
	}
	o.Replay = campaignReplay(o, mf, *defect)
	o.Stdout = stdout
	if *dry {
		return campaignrun.DryRun(o)
	}
	_, err = campaignrun.Run(ctx, o)
	if errors.Is(err, campaignrun.ErrViolated) {
		return fmt.Errorf("%w: %w", harnessrun.ErrFailed, err)
	}
	if err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	return nil
}

// campaignCell is the one cell the matrix flags select: the first the
// matrix plans (the default: its first secure cell).
func campaignCell(o *harnessrun.Options) (matrix.Cell, error) {
	mf, err := matrix.ParseFilter(o.Workloads, o.Trusts, o.Discoveries, o.Profiles)
	if err != nil {
		return matrix.Cell{}, err
	}
	cells, err := matrix.Plan(mf)
	if err != nil {
		return matrix.Cell{}, err
	}
	if len(cells) == 0 {
		return matrix.Cell{}, errors.New("--workload, --trust, --discovery and --profile select no cell")
	}
	return cells[0], nil
}

// campaignReplay is the command that replays a schedule on the same
// clusters, cell, Pylons and defect (the schedule file is appended).
func campaignReplay(o campaignrun.Options, mf *runFlags, defect string) string {
	// The harness beside the suite, as a case's repro names it.
	bin := "harness"
	if dir, err := harnessrun.BinDir(); err == nil {
		bin = filepath.Join(dir, "harness")
	}
	args := []string{bin, "campaign", "--topology", mf.topology}
	args = append(args, o.Run.ProviderArgs...)
	c := o.Cell
	args = append(args, "--workload", string(c.Workload), "--trust", string(c.Trust), "--discovery", string(c.Discovery), "--profile", string(c.Profile),
		"--pylons", strconv.Itoa(o.Pylons), "--bad-pylons", strconv.Itoa(o.BadPylons), "--shrink=false")
	if defect != "" {
		args = append(args, "--defect", defect)
	}
	return strings.Join(args, " ")
}
