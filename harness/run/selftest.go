package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// SelftestOptions configure `harness selftest`. Of the embedded Options,
// the catalogue and matrix filters are ignored: each defect brings its own.
type SelftestOptions struct {
	Options
	// Defects to re-create (see defects.Select); those only `harness
	// campaign` catches are left out (SelftestDefects).
	Defects []defects.Defect
}

// Default cells of a defect that names none: one workload kind and the
// trust source that exercises the custom bundle, so runs stay targeted.
const (
	selftestWorkload = "statefulset"
	selftestTrust    = "bundle"
)

// selftestKey is what a defect's run deploys apart from the defect itself;
// defects sharing it share one defect-free baseline run.
type selftestKey struct{ workloads, trusts, discovery string }

func keyOf(d defects.Defect) selftestKey {
	k := selftestKey{d.Workloads, d.Trusts, d.Discovery}
	if k.workloads == "" {
		k.workloads = selftestWorkload
	}
	if k.trusts == "" {
		k.trusts = selftestTrust
	}
	return k
}

// ErrSelftestFailed is wrapped when the selftest ran but some defect was
// not caught, or the baseline was red (the CLI exits 1).
var ErrSelftestFailed = errors.New("selftest failed")

// Selftest brings a fresh environment up, mints the PKI once, runs for
// every group of defects a defect-free baseline of their scenarios, then
// for each defect the same scenarios with it switched on in its role, and
// judges the detection matrix. It writes the matrix (detection.md,
// detection.json, junit.xml) and summary.md into the artifacts folder, each
// run's own reports under baseline-N/ and defects/<name>/. A defect that
// only a sequence of faults reveals (defects.Defect.Campaign) is left out
// with a note on Stdout; a selection of such defects only is refused.
func Selftest(ctx context.Context, o SelftestOptions) (m *reports.DetectionMatrix, err error) {
	start := time.Now()
	if err := o.fill(); err != nil {
		return nil, err
	}
	if len(o.Defects) == 0 {
		return nil, errors.New("selftest: no defect selected")
	}
	if err := ErrOnlyCampaign(o.Defects); err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	run, skipped := SelftestDefects(o.Defects)
	for _, d := range skipped {
		fmt.Fprintf(o.Stdout, "skip %s: %s\n", d.Name, CampaignNote(d))
	}
	o.Defects = run
	if err := checkBundle(o.BinDir); err != nil {
		return nil, err
	}
	topo, log := o.Topology, o.Logger
	// The defects live in the reference binary beside this harness; an
	// environment brought up by another harness runs another binary.
	if _, serr := o.Provider.Status(ctx, topo.Name); serr == nil {
		return nil, fmt.Errorf("selftest: environment %q is already up, possibly with another reference binary; selftest brings up its own: run `harness down --topology %s` first", topo.Name, o.TopologyRef)
	}
	if err := os.MkdirAll(o.Artifacts, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts folder %q: %w", o.Artifacts, err)
	}
	if _, cerr := faults.CleanupLeftovers(ctx, o.StateDir, log); cerr != nil {
		return nil, fmt.Errorf("remove faults left by an earlier run: %w", cerr)
	}
	env, err := o.Provider.Up(ctx, clusters.SpecOf(topo), clusters.WithLogger(log), clusters.WithProgress(o.Stdout))
	if err != nil {
		return nil, fmt.Errorf("bring up topology %q: %w", topo.Name, err)
	}
	defer func() {
		if o.Keep {
			log.Info("leaving the clusters up", "topology", topo.Name, "down", o.downHint())
			return
		}
		if derr := o.Provider.Down(context.WithoutCancel(ctx), topo.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("bring down topology %q: %w", topo.Name, derr))
		}
	}()
	mint, err := (&pki.Minter{Logger: log}).Mint(ctx, pkitopo.Request(topo, 0, false), filepath.Join(o.StateDir, "pki"))
	if err != nil {
		return nil, err
	}
	base := catalog.RunConfig{Topology: topo, Environment: env, StateDir: o.StateDir, PKIDir: mint.Dir, TimeScale: o.TimeScale, Parallel: DefaultParallel, Images: o.Images,
		OwnerPID: os.Getpid()}

	m = &reports.DetectionMatrix{}
	var keys []selftestKey
	ids := map[selftestKey][]string{}
	for _, d := range o.Defects {
		k := keyOf(d)
		if _, ok := ids[k]; !ok {
			keys = append(keys, k)
		}
		for _, s := range d.Scenarios {
			if !slices.Contains(ids[k], s) {
				ids[k] = append(ids[k], s)
			}
			if !slices.Contains(m.Scenarios, s) {
				m.Scenarios = append(m.Scenarios, s)
			}
		}
	}
	baseline := map[selftestKey][]reports.CaseResult{}
	for i, k := range keys {
		dir := filepath.Join(o.Artifacts, fmt.Sprintf("baseline-%d", i+1))
		fmt.Fprintf(o.Stdout, "\n== baseline %d/%d (defect-free): %s [workload=%s trust=%s discovery=%s]\n", i+1, len(keys), strings.Join(ids[k], " "), k.workloads, k.trusts, or(k.discovery, "endpointslice"))
		res, _, err := o.selftestRun(ctx, base, k, ids[k], manifests.Defect{}, dir)
		if err != nil {
			return m, fmt.Errorf("selftest baseline %d: %w", i+1, err)
		}
		baseline[k] = res
		m.Baseline = append(m.Baseline, res...)
	}
	for i, d := range o.Defects {
		k := keyOf(d)
		dir := filepath.Join(o.Artifacts, "defects", string(d.Name))
		fmt.Fprintf(o.Stdout, "\n== defect %d/%d: %s on %s: %s\n", i+1, len(o.Defects), d.Name, d.Role, strings.Join(d.Scenarios, " "))
		res, took, err := o.selftestRun(ctx, base, k, d.Scenarios, manifests.Defect{Role: d.Role, Names: string(d.Name)}, dir)
		if err != nil {
			// Keep what was judged so far: a cut-short selftest still reports.
			m.WallTime = time.Since(start)
			_ = writeSelftest(o.Artifacts, *m)
			return m, fmt.Errorf("selftest defect %s: %w", d.Name, err)
		}
		row := judgeRow(d, res, baseline[k], dir, took)
		fmt.Fprintf(o.Stdout, "   %s: %s\n", row.Verdict, row.Message)
		m.Defects = append(m.Defects, row)
	}
	m.WallTime = time.Since(start)
	if err := writeSelftest(o.Artifacts, *m); err != nil {
		return m, err
	}
	fmt.Fprintln(o.Stdout)
	_ = m.Text(o.Stdout)
	fmt.Fprintf(o.Stdout, "wall time %s; JUnit %s; matrix %s\n", m.WallTime.Round(time.Second),
		filepath.Join(o.Artifacts, reports.DetectionJUnit), filepath.Join(o.Artifacts, reports.DetectionMD))
	if !m.OK() {
		return m, fmt.Errorf("%w: %d of %d defects not caught or baseline red (see %s)", ErrSelftestFailed, len(m.Gaps()), len(m.Defects), filepath.Join(o.Artifacts, reports.DetectionMD))
	}
	return m, nil
}

// SelftestDefects splits ds into the defects selftest runs (a scenario
// catches each) and those it leaves out: a defect that only a sequence of
// faults reveals (defects.Defect.Campaign) is `harness campaign`'s.
func SelftestDefects(ds []defects.Defect) (run, campaign []defects.Defect) {
	for _, d := range ds {
		if d.ByCampaign() {
			campaign = append(campaign, d)
		} else {
			run = append(run, d)
		}
	}
	return run, campaign
}

// CampaignNote says why selftest leaves a campaign defect out, and what
// catches it instead.
func CampaignNote(d defects.Defect) string {
	return fmt.Sprintf("only a sequence of faults reveals it, not a scenario; `harness campaign` catches it (invariant %s; the sequence: `harness selftest --list --defect %s`)", d.Campaign, d.Name)
}

// ErrOnlyCampaign refuses a selection of campaign defects only, which
// selftest has nothing to run for; nil otherwise.
func ErrOnlyCampaign(ds []defects.Defect) error {
	run, campaign := SelftestDefects(ds)
	if len(run) > 0 || len(campaign) == 0 {
		return nil
	}
	names := make([]string, len(campaign))
	for i, d := range campaign {
		names[i] = fmt.Sprintf("%s (%s)", d.Name, d.Campaign)
	}
	return fmt.Errorf("no scenario catches %s: only a sequence of faults reveals them; run `harness campaign`", strings.Join(names, ", "))
}

// judgeRow is the matrix row of defect d from its run's results.
func judgeRow(d defects.Defect, results, baseline []reports.CaseResult, dir string, took time.Duration) reports.DefectRow {
	row := reports.DefectRow{Name: string(d.Name), Role: d.Role, Epic: int(d.Epic), Site: d.Site, Recreates: d.Recreates,
		Expected: d.Scenarios, Reasons: d.Reasons, Artifacts: dir, Duration: took}
	row.Judge(results, baseline)
	return row
}

// Rejudge judges again, with the registry's current expectations, the case
// results an earlier selftest left in dir (baseline-N/ and defects/<name>/),
// and rewrites its matrix: expectations can be sharpened without running
// the clusters again. Defects without results there are left out.
func Rejudge(dir string, ds []defects.Defect) (*reports.DetectionMatrix, error) {
	old := reports.DetectionMatrix{}
	if data, err := os.ReadFile(filepath.Join(dir, reports.DetectionJSON)); err == nil {
		_ = json.Unmarshal(data, &old)
	}
	m := &reports.DetectionMatrix{WallTime: old.WallTime}
	bases, _ := filepath.Glob(filepath.Join(dir, "baseline-*"))
	for _, b := range bases {
		res, err := reports.LoadCases(b)
		if err != nil {
			return nil, err
		}
		m.Baseline = append(m.Baseline, res...)
	}
	if len(m.Baseline) == 0 {
		return nil, fmt.Errorf("rejudge %s: no baseline results (baseline-N/cases); is it a selftest artifacts folder?", dir)
	}
	took := map[string]time.Duration{}
	for _, r := range old.Defects {
		took[r.Name] = r.Duration
	}
	for _, d := range ds {
		ddir := filepath.Join(dir, "defects", string(d.Name))
		res, err := reports.LoadCases(ddir)
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			continue
		}
		for _, s := range d.Scenarios {
			if !slices.Contains(m.Scenarios, s) {
				m.Scenarios = append(m.Scenarios, s)
			}
		}
		m.Defects = append(m.Defects, judgeRow(d, res, m.Baseline, ddir, took[string(d.Name)]))
	}
	return m, writeSelftest(dir, *m)
}

// selftestRun runs the scenarios ids in the cells of k, with defect
// switched on (the zero Defect: none), into dir.
func (o *Options) selftestRun(ctx context.Context, base catalog.RunConfig, k selftestKey, ids []string, defect manifests.Defect, dir string) ([]reports.CaseResult, time.Duration, error) {
	start := time.Now()
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = regexp.QuoteMeta(id)
	}
	cfg := base
	cfg.Artifacts, cfg.Defect = dir, defect
	sf, err := catalog.ParseFilter("^("+strings.Join(quoted, "|")+")$", "", "")
	if err != nil {
		return nil, 0, err
	}
	cells, err := selftestCells(k, ids)
	if err != nil {
		return nil, 0, err
	}
	plan := catalog.Plan(catalog.Catalogue(), cells, sf)
	if len(plan) == 0 {
		return nil, 0, fmt.Errorf("scenarios %s plan no case in workload=%s trust=%s", strings.Join(ids, ", "), k.workloads, k.trusts)
	}
	results, notRun, _, err := o.suiteIn(ctx, cfg, plan)
	if err != nil {
		return nil, 0, err
	}
	s := summarize(results)
	s.WallTime = time.Since(start)
	if err := s.Write(dir); err != nil {
		return nil, 0, err
	}
	if notRun > 0 && ctx.Err() != nil {
		return nil, 0, fmt.Errorf("%w: interrupted: %w", ErrIncomplete, ctx.Err())
	}
	return results, time.Since(start), nil
}

// selftestCells are the cells of k, in the secure profile unless one of
// the scenarios ids runs only in the insecure one: a Pass scenario would
// just run twice, and each red run of it waits out its deadline.
func selftestCells(k selftestKey, ids []string) ([]matrix.Cell, error) {
	profiles := string(matrix.Secure)
	for _, id := range ids {
		if s, ok := catalog.ByID(id); ok && slices.Equal(s.Requires.Profiles, []matrix.Profile{matrix.Insecure}) {
			profiles = ""
		}
	}
	f, err := matrix.ParseFilter(k.workloads, k.trusts, or(k.discovery, string(matrix.EndpointSlice)), profiles)
	if err != nil {
		return nil, err
	}
	return matrix.Plan(f)
}

// writeSelftest writes the matrix and a summary.md holding it.
func writeSelftest(dir string, m reports.DetectionMatrix) error {
	if err := m.Write(dir); err != nil {
		return fmt.Errorf("write detection matrix: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "summary.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := m.Markdown(f); err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n## Baseline\n\nEvery case of the defect-free baseline runs is in `baseline-N/summary.md`; each defect's run in `defects/<name>/`.\n")
	return err
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
