package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// Options configure a run.
type Options struct {
	// Topology is the topology, parsed once; it reaches the suite as a value.
	Topology *topology.Topology
	// TopologyRef is how the user named it (a path or an embedded name),
	// for the commands the run suggests.
	TopologyRef string
	// Artifacts is the folder for junit.xml, the summary and the evidence.
	Artifacts string
	// Provider brings the clusters up and down.
	Provider clusters.Provider
	// ProviderName names it (embedded, existing) in the summary, the run
	// configuration and the JUnit report.
	ProviderName string
	// ProviderArgs are the flags that picked and configured the provider
	// (none for the embedded one), for the repro commands and the hint
	// that brings kept clusters down.
	ProviderArgs []string
	// StateDir is the topology's state folder (the PKI is minted into
	// StateDir/pki); empty means $XDG_STATE_HOME/nvcf-harness/<name>.
	StateDir string
	// BinDir holds the suite and the reference binary (default: the
	// running executable's folder, where `make build` puts them).
	BinDir string
	// Run, Layers and Labels filter the catalogue (catalog.ParseFilter);
	// Workloads, Trusts, Discoveries and Profiles the matrix
	// (matrix.ParseFilter), comma lists each.
	Run, Layers, Labels                      string
	Workloads, Trusts, Discoveries, Profiles string
	// Keep leaves the clusters up after the run.
	Keep bool
	// TimeScale multiplies the scenarios' deadlines (default 1).
	TimeScale float64
	// Parallel is how many isolated cases of a cell run at the same time
	// (catalog.RunConfig.Parallel); 1 runs every case one after another,
	// 0 means DefaultParallel.
	Parallel int
	// Environments is how many environments of the topology the run
	// brings up, side by side, to run parts of its plan at the same time
	// (catalog.Divide); 0 means 1. Names and results do not change with
	// it. Only a provider that places environments side by side (the
	// embedded one) can run more than one.
	Environments int
	// Images replace the reference components' images (empty: nvcf-ref:dev).
	Images manifests.Images
	// Reruns runs failed cases again, up to this many times, each time in
	// a fresh suite process; a case that then passes is reported as flaky.
	Reruns int
	// Meta describes the run in its reports; the CLI fills what only it
	// knows (version, commit, provider, component versions, image
	// digests), Run adds the rest.
	Meta reports.Meta
	// Flavor is the manifests' flavor (empty: the reference one).
	Flavor manifests.Flavor
	// Real lists the roles whose images are NVCF's real components, and
	// Proof forces the server-side proofs' source (catalog.RunConfig).
	Real  []string
	Proof catalog.ProofSource
	// NVCFBinDir names real NVCF binaries whose --help says what the nvcf
	// flavor's components accept (catalog.RunConfig.NVCFBinDir).
	NVCFBinDir string
	// Stdout receives gotestsum's output and the summary; Logger progress.
	Stdout io.Writer
	Logger *slog.Logger
}

// DefaultParallel is how many isolated cases run at once unless told: they
// spend their time watching the Stargates for a refusal's window, so
// more than the machine's cores overlap well.
const DefaultParallel = 12

// DefaultEnvironments is how many environments a run on the embedded
// provider brings up unless told: two keep the machine's two cores busy
// where one leaves most of a core idle (docs/performance.md).
const DefaultEnvironments = 2

// Result is what a run produced.
type Result struct {
	Summary reports.Summary
	// Report is everything the reports render (report.json).
	Report reports.Run
	// JUnit is the path of junit.xml.
	JUnit string
	// Reused says the clusters were running before the run (so it left them up).
	Reused bool
}

// ErrFailed is wrapped when a run completed but not every case passed: a
// conformance verdict (the CLI exits 1).
var ErrFailed = errors.New("conformance run failed")

// ErrIncomplete is wrapped when the suite ended before every planned test
// reported (Ctrl-C, a timeout, a crash): no verdict (the CLI exits 2, as for
// any harness error). The summary still totals the whole plan.
var ErrIncomplete = errors.New("conformance run incomplete")

// Run performs one conformance run. It returns an error wrapping ErrFailed
// when the suite ran and some case failed, after writing every report.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	start := time.Now()
	if err := o.fill(); err != nil {
		return nil, err
	}
	log := o.Logger
	topo := o.Topology
	plan, err := o.Plan()
	if err != nil {
		return nil, err
	}
	if len(plan) == 0 {
		return nil, fmt.Errorf("the filters select no case: check --run, --layer, --label, --workload, --trust, --discovery and --profile (see `harness list --cases`)")
	}
	if err := checkBundle(o.BinDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Artifacts, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts folder %q: %w", o.Artifacts, err)
	}
	planned := catalog.PlannedResults(plan)
	// The plan is on disk before anything runs, so even a run killed during
	// bring-up says what it was going to do.
	if err := writePlan(o.Artifacts, planned); err != nil {
		return nil, err
	}
	res = &Result{JUnit: filepath.Join(o.Artifacts, reports.JUnitFile)}
	hb := newHeartbeat(o.Stdout, quietLimit)
	defer hb.Close()
	o.Stdout = hb
	shards := o.shards(catalog.Divide(plan, o.Environments, o.Parallel))
	hb.Doing("%d planned tests in %d cells on %d environment(s); plan in %s", len(planned), len(catalog.Cells(plan)), len(shards), filepath.Join(o.Artifacts, PlanFile))
	for _, sh := range shards {
		// A killed earlier run may have left fault rules behind; they would
		// break this run's cases long before its first fault would clean them.
		if cleaned, cerr := faults.CleanupLeftovers(ctx, sh.stateDir, log); cerr != nil {
			return nil, fmt.Errorf("remove faults left by an earlier run: %w", cerr)
		} else if len(cleaned) > 0 {
			log.Info("removed faults left by an earlier run", "count", len(cleaned), "environment", sh.name)
		}
	}
	hb.Doing("minting the PKI")
	m, err := (&pki.Minter{Logger: log}).Mint(ctx, pkitopo.Request(topo, 0, false), filepath.Join(o.StateDir, "pki"))
	if err != nil {
		return res, err
	}
	cfg := catalog.RunConfig{
		Topology: topo, PKIDir: m.Dir,
		TimeScale: o.TimeScale, Parallel: o.Parallel, Images: o.Images, Flavor: o.Flavor,
		Real: o.Real, Proof: o.Proof, NVCFBinDir: o.NVCFBinDir,
		OwnerPID: os.Getpid(),
		Provider: o.ProviderName,
	}
	if len(shards) > 1 {
		// An earlier run's evidence, when it ran on one environment.
		if err := clearCases(o.Artifacts); err != nil {
			return res, err
		}
	}
	results, reused, testErr, runErr := o.runShards(ctx, hb, cfg, shards)
	res.Reused = reused
	// Every report totals the whole plan, also when an environment never
	// came up or the run was interrupted before a shard's suite reported.
	results, _ = reports.WithNotRun(results, planned)
	res.Report = o.report(start, results, len(shards))
	res.Report.Detection, err = reports.ReadDetection(o.Artifacts)
	if err != nil {
		log.Warn("detection matrix left out of the reports", "err", err)
	}
	if err := res.Report.Write(o.Artifacts); err != nil {
		return res, err
	}
	res.Summary = res.Report.Summary()
	notRun := res.Summary.Total.NotRun
	fmt.Fprintln(o.Stdout)
	_ = res.Summary.Text(o.Stdout)
	fmt.Fprintf(o.Stdout, "wall time %s; JUnit %s; report %s; summary %s\n", res.Summary.WallTime.Round(time.Second), res.JUnit,
		filepath.Join(o.Artifacts, reports.HTMLFile), filepath.Join(o.Artifacts, "summary.md"))
	switch {
	case runErr != nil && ctx.Err() == nil:
		return res, runErr
	case notRun > 0 || ctx.Err() != nil:
		err := fmt.Errorf("%w: %s (see %s)", ErrIncomplete, res.Summary.Interruption(), suiteLogs(shards))
		return res, errors.Join(err, ctx.Err(), runErr, testErr)
	case testErr != nil:
		return res, fmt.Errorf("%w: %w", ErrFailed, testErr)
	case !res.Summary.OK():
		return res, fmt.Errorf("%w: %d failed, %d errors", ErrFailed, res.Summary.Total.Fail, res.Summary.Total.Error)
	case res.Summary.Total.Total() == 0:
		return res, fmt.Errorf("%w: no case ran (see %s)", ErrFailed, suiteLogs(shards))
	}
	return res, nil
}

// ErrEnvironmentGone is wrapped when the environment stopped during the
// suite (its provider no longer finds it).
var ErrEnvironmentGone = errors.New("the environment stopped during the run")

const envWatchInterval = 2 * time.Second

// watchEnvironment asks the provider every interval whether environment
// name still exists, and stops the suite with ErrEnvironmentGone when it
// does not; other errors (an API server slow to answer) are no verdict. A
// clusters.Prober answers without the API requests of Status.
func watchEnvironment(ctx context.Context, p clusters.Provider, name string, interval time.Duration, stop context.CancelCauseFunc) {
	probe := func() error { _, err := p.Status(ctx, name); return err }
	if pr, ok := p.(clusters.Prober); ok {
		probe = func() error { return pr.Probe(ctx, name) }
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := probe(); errors.Is(err, clusters.ErrNotFound) {
			stop(fmt.Errorf("%w: %w", ErrEnvironmentGone, err))
			return
		}
	}
}

func (o *Options) fill() error {
	switch {
	case o.Topology == nil:
		return errors.New("run: no topology; pass --topology")
	case o.Artifacts == "":
		return errors.New("run: no artifacts folder; pass --artifacts")
	case o.Provider == nil:
		return errors.New("run: no clusters provider")
	}
	abs, err := filepath.Abs(o.Artifacts)
	if err != nil {
		return err
	}
	o.Artifacts = abs
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TimeScale <= 0 {
		o.TimeScale = 1
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.Environments <= 0 {
		o.Environments = 1
	}
	if o.TopologyRef == "" {
		o.TopologyRef = o.Topology.Name
	}
	if o.BinDir == "" {
		if o.BinDir, err = BinDir(); err != nil {
			return err
		}
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(clusters.StateHome(), o.Topology.Name)
	}
	return nil
}

// Plan is the run's plan: the cases of the catalogue filters (Run, Layers,
// Labels) in the cells of the matrix filters (matrix.Plan), in the order
// they run.
func (o *Options) Plan() ([]catalog.Case, error) {
	sf, err := catalog.ParseFilter(o.Run, o.Layers, o.Labels)
	if err != nil {
		return nil, err
	}
	mf, err := matrix.ParseFilter(o.Workloads, o.Trusts, o.Discoveries, o.Profiles)
	if err != nil {
		return nil, err
	}
	cells, err := matrix.Plan(mf)
	if err != nil {
		return nil, err
	}
	return catalog.Plan(catalog.Catalogue(), cells, sf), nil
}

// clearCases removes the case results and the suite log of an earlier run
// in the same folder. The suite appends to its log, so that the attempts of
// one run share it; left from an earlier run, its lines would be read as
// this run's (harness bench counts the cell switches in it).
func clearCases(artifacts string) error {
	if err := os.RemoveAll(filepath.Join(artifacts, reports.CasesDir)); err != nil {
		return fmt.Errorf("clear old case results: %w", err)
	}
	if err := os.Remove(filepath.Join(artifacts, catalog.SuiteLog)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear the old suite log: %w", err)
	}
	return nil
}

// whileEnvironmentLives runs the suite through run with a context that
// stops it, as on Ctrl-C, when the environment goes away under it (its
// provider's agent killed, say: the cases could only time out), and joins
// ErrEnvironmentGone to the suite's error then.
func (o *Options) whileEnvironmentLives(ctx context.Context, name string, run func(context.Context) error) error {
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go watchEnvironment(sctx, o.Provider, name, envWatchInterval, stop)
	testErr := run(sctx)
	if cause := context.Cause(sctx); errors.Is(cause, ErrEnvironmentGone) {
		testErr = errors.Join(cause, testErr)
	}
	return testErr
}

// suiteIn runs the cases of plan, and no other, in one suite with cfg, in
// cfg.Artifacts, which may differ from the run's (a selftest runs one
// suite per defect; JUnit in junit.xml there), and returns every planned
// test's result: one that never reported is an error (notRun counts them).
// testErr is the suite's own exit; err a failure to run or read it.
func (o *Options) suiteIn(ctx context.Context, cfg catalog.RunConfig, plan []catalog.Case) (results []reports.CaseResult, notRun int, testErr, err error) {
	cfg.Cases = catalog.CaseNames(plan)
	cfgPath, err := catalog.WriteRunConfig(cfg.Artifacts, cfg)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := clearCases(cfg.Artifacts); err != nil {
		return nil, 0, nil, err
	}
	junit := filepath.Join(cfg.Artifacts, "junit.xml")
	testErr = o.whileEnvironmentLives(ctx, cfg.Environment.Name, func(ctx context.Context) error {
		return runSuite(ctx, o.BinDir, cfg.Artifacts, cfgPath, junit, cfg.Environment.ProcessEnv, o.Stdout)
	})
	if results, err = reports.LoadCases(cfg.Artifacts); err != nil {
		return nil, 0, testErr, err
	}
	results, notRun = reports.WithNotRun(results, catalog.PlannedResults(plan))
	return results, notRun, testErr, nil
}

// summarize is the Summary of results, layers in report order.
func summarize(results []reports.CaseResult) reports.Summary {
	layers := make([]string, len(catalog.Layers))
	for i, l := range catalog.Layers {
		layers[i] = string(l)
	}
	return reports.Summarize(results, layers)
}
