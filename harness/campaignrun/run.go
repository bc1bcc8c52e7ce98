// Package campaignrun is `harness campaign`: it draws a schedule of faults
// from a seed (or reads one), brings the topology up, runs the schedule in
// the suite (TestCampaign) while the invariants are checked, and, when one
// is violated, shrinks the schedule by delta debugging to a smaller one
// that still violates it, replaying each candidate on the same clusters.
// Its reports (campaignreport) carry the timeline, the verdict per
// invariant and the commands that replay the schedules.
package campaignrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/harness/campaignreport"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// Options configure a campaign.
type Options struct {
	// Run brings the clusters up and down (topology, provider, artifacts,
	// images, Keep); its filters play no part.
	Run harnessrun.Options
	// Cell is the matrix cell the campaign deploys.
	Cell matrix.Cell
	// Seed, Duration, Settle and Kinds draw the schedule, unless
	// ScheduleFile names one to replay.
	Seed             int64
	Duration, Settle time.Duration
	Kinds            []campaign.Kind
	ScheduleFile     string
	// Pylons and BadPylons are the campaign's Pylons (catalog.CampaignConfig).
	Pylons, BadPylons int
	// Scale measures cold registration and re-convergence after a rollout.
	Scale bool
	// Shrink searches a violating schedule for a smaller one that still
	// violates the same invariant, in at most MaxTrials replays.
	Shrink    bool
	MaxTrials int
	// Defect switches a registered defect on (self-validation).
	Defect manifests.Defect
	// Memory lists the environment's processes with their resident memory
	// (local.Memory, on the embedded provider); with Scale, the pods'
	// peak memory by role is sampled while the campaign runs. Nil: none.
	Memory func() ([]local.ProcessMemory, error)
	// Replay is the command line that replays a schedule file with the same
	// clusters, cell and Pylons; the file's path is appended.
	Replay string
	Stdout io.Writer
}

// ErrViolated is wrapped when the campaign ran and an invariant was
// violated: a verdict (the CLI exits 1, as `harness run` does on a failure).
var ErrViolated = errors.New("campaign violated an invariant")

// Outcome is what a campaign produced.
type Outcome struct {
	Result campaign.Result
	Shrunk *campaignreport.Shrunk
}

// Schedule is the schedule o asks for: the file's, validated against the
// topology, or one drawn from the seed.
func (o Options) Schedule(topo *topology.Topology) (campaign.Schedule, error) {
	var regions, workers []string
	for _, c := range topo.ByRole(topology.RoleStargate) {
		regions = append(regions, c.Name)
	}
	for _, c := range topo.ByRole(topology.RoleWorkers) {
		workers = append(workers, c.Name)
	}
	if o.ScheduleFile != "" {
		s, err := campaign.Read(o.ScheduleFile)
		if err != nil {
			return s, err
		}
		if err := s.Validate(regions, workers); err != nil {
			return s, fmt.Errorf("schedule %s: %w", o.ScheduleFile, err)
		}
		return s, nil
	}
	return campaign.Generate(o.Seed, campaign.Options{
		Duration: o.Duration, Settle: o.Settle, Kinds: o.Kinds,
		Regions: regions, Workers: workers, Topology: topo.Name,
	})
}

// DryRun draws or reads the schedule, writes it into the artifacts folder
// and prints it, and runs nothing.
func DryRun(o Options) error {
	s, path, err := o.writeSchedule()
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Stdout, s.Text())
	fmt.Fprintf(o.Stdout, "schedule %s; run it: %s\n", path, o.replay(path))
	return nil
}

// writeSchedule is the schedule o asks for, written to
// <artifacts>/schedule.json.
func (o Options) writeSchedule() (campaign.Schedule, string, error) {
	s, err := o.Schedule(o.Run.Topology)
	if err != nil {
		return s, "", err
	}
	dir, err := filepath.Abs(o.Run.Artifacts)
	if err != nil {
		return s, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, "", fmt.Errorf("artifacts folder %q: %w", dir, err)
	}
	path := filepath.Join(dir, campaignreport.ScheduleFile)
	return s, path, s.Write(path)
}

// Run performs the campaign and writes its reports into the artifacts
// folder. It returns an error wrapping ErrViolated when an invariant was
// violated, after writing every report.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	out := o.Stdout
	if out == nil {
		out = io.Discard
	}
	o.Run.Stdout = out
	// The schedule is on disk and on screen before anything runs, so a
	// campaign cut during bring-up can still be replayed.
	s, schedPath, err := o.writeSchedule()
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(schedPath)
	fmt.Fprintln(out, s.Text())
	fmt.Fprintf(out, "schedule %s; replay: %s\n", schedPath, o.replay(schedPath))
	sess, err := harnessrun.OpenSession(ctx, o.Run)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sess.Close(context.WithoutCancel(ctx)) }()
	sess.Doing("running the campaign on cell %s: %s of faults, then %s to settle", o.Cell.Name(), s.Duration, s.Settle)
	res, err := o.once(ctx, sess, s, dir)
	if err != nil {
		return nil, err
	}
	oc := &Outcome{Result: res}
	if violated := res.Violated(); len(violated) > 0 && o.Shrink && len(s.Faults) > 1 && ctx.Err() == nil {
		oc.Shrunk = o.shrink(ctx, sess, s, violated[0], dir)
	}
	if err := campaignreport.Write(dir, res, campaignreport.Options{Replay: o.replay(schedPath), Shrunk: oc.Shrunk}); err != nil {
		return oc, err
	}
	fmt.Fprintln(out)
	_ = campaignreport.Text(out, res)
	if oc.Shrunk != nil {
		fmt.Fprintf(out, "shrunk to %d of %d faults, still violating %s; replay: %s\n", len(oc.Shrunk.Schedule.Faults), len(s.Faults), oc.Shrunk.Invariant, oc.Shrunk.Replay)
	}
	fmt.Fprintf(out, "report %s; JUnit %s\n", filepath.Join(dir, "campaign.html"), filepath.Join(dir, "junit.xml"))
	switch {
	case res.Error != "":
		return oc, fmt.Errorf("campaign (no verdict): %s", res.Error)
	case len(res.Violations) > 0:
		return oc, fmt.Errorf("%w: %s", ErrViolated, joinInvariants(res.Violated()))
	case !res.OK():
		return oc, fmt.Errorf("campaign (no verdict): an invariant was never checked (see %s)", filepath.Join(dir, "campaign.html"))
	}
	return oc, nil
}

func joinInvariants(invs []campaign.Invariant) string {
	var s []string
	for _, inv := range invs {
		s = append(s, string(inv))
	}
	return strings.Join(s, ", ")
}

// replay is the command that replays the schedule file at path.
func (o Options) replay(path string) string {
	return o.Replay + " --schedule " + path
}

// once runs schedule s in the session, its suite output and result in dir.
func (o Options) once(ctx context.Context, sess *harnessrun.Session, s campaign.Schedule, dir string) (campaign.Result, error) {
	path := filepath.Join(dir, "schedule.json")
	if err := s.Write(path); err != nil {
		return campaign.Result{}, err
	}
	cfg := sess.Config
	cfg.Artifacts = dir
	cfg.Defect = o.Defect
	result := filepath.Join(dir, "result.json")
	_ = os.Remove(result)
	cfg.Campaign = &catalog.CampaignConfig{Cell: o.Cell, Schedule: path, Result: result,
		Pylons: o.Pylons, BadPylons: o.BadPylons, Scale: o.Scale}
	var peaks func() []campaign.RoleMemory
	mctx, stop := context.WithCancel(ctx)
	if o.Scale && o.Memory != nil {
		peaks = peakMemory(mctx, o.Memory)
	}
	testErr := sess.RunTest(ctx, cfg, "TestCampaign")
	stop()
	return o.result(ctx, result, dir, testErr, peaks)
}

// result reads what the suite wrote, with the pods' peak memory added.
func (o Options) result(ctx context.Context, path, dir string, testErr error, peaks func() []campaign.RoleMemory) (campaign.Result, error) {
	res, err := readResult(path)
	if err != nil {
		// The suite wrote no result: it crashed or was cut before the end.
		return res, errors.Join(fmt.Errorf("the campaign suite left no result (see %s)", filepath.Join(dir, catalog.SuiteLog)), testErr, ctx.Err())
	}
	if peaks != nil && res.Scale != nil {
		res.Scale.Memory = peaks()
	}
	return res, nil
}

// shrink searches for a smaller schedule that still violates inv, each
// trial in its own folder under dir/shrink.
func (o Options) shrink(ctx context.Context, sess *harnessrun.Session, s campaign.Schedule, inv campaign.Invariant, dir string) *campaignreport.Shrunk {
	n := 0
	fails := func(ctx context.Context, cand campaign.Schedule) (bool, error) {
		n++
		cand = compact(cand)
		tdir := filepath.Join(dir, "shrink", "trial-"+strconv.Itoa(n))
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			return false, err
		}
		sess.Doing("shrinking: trial %d replays faults %v (%s), looking for %s", n, ids(cand), cand.Window(), inv)
		res, err := o.once(ctx, sess, cand, tdir)
		if err != nil {
			return false, err
		}
		if res.Error != "" {
			return false, errors.New(res.Error)
		}
		_, violated := res.First(inv)
		sess.Doing("shrinking: trial %d: %s %s", n, inv, map[bool]string{true: "violated", false: "held"}[violated])
		return violated, nil
	}
	min, trials, err := campaign.Shrink(ctx, s, fails, o.MaxTrials)
	min = compact(min)
	// campaignreport.Write writes the minimal schedule to this file.
	path := filepath.Join(dir, campaignreport.ShrunkScheduleFile)
	sh := &campaignreport.Shrunk{Invariant: inv, Schedule: min, Replay: o.replay(path), Trials: trials}
	if err != nil {
		sh.Err = err.Error()
	}
	return sh
}

func ids(s campaign.Schedule) []int {
	var out []int
	for _, f := range s.Faults {
		out = append(out, f.ID)
	}
	return out
}

// compact moves a sub-schedule's faults earlier, keeping their order,
// overlaps and gaps, so its first fault starts after a short lead and the
// window ends when its last fault heals: a trial then lasts as long as its
// own faults need, not the whole original window.
func compact(s campaign.Schedule) campaign.Schedule {
	if len(s.Faults) == 0 {
		return s
	}
	const lead = campaign.Span(5 * time.Second)
	first := slices.MinFunc(s.Faults, func(a, b campaign.Fault) int { return int(a.Start - b.Start) }).Start
	shift := max(first-lead, 0)
	out := s
	out.Faults = slices.Clone(s.Faults)
	var end campaign.Span
	for i := range out.Faults {
		out.Faults[i].Start -= shift
		end = max(end, out.Faults[i].End())
	}
	out.Duration = end + campaign.Span(time.Second)
	return out
}

func readResult(path string) (campaign.Result, error) {
	var r campaign.Result
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}
