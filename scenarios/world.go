package scenarios

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/scenarios/probe"
)

// World is what lives for a whole run: the topology, the environment the
// runner brought up, the PKI, the deployer and the cell deployed now. Cases
// see it through an Env.
type World struct {
	Config   *catalog.RunConfig
	Topology *topology.Topology
	PKI      *pki.Manifest
	Log      *slog.Logger
	// Progress prints the live progress lines `harness run` shows (nil: none).
	Progress *reports.Progress
	// Build is what the components under test accept (buildOf).
	Build nvcfbuild.Build

	deployer cellDeployer
	// catalogue is the list cases and their controls come from.
	catalogue []catalog.Scenario
	// tries are the catalogue's steps, by scenario ID (tries.go).
	tries map[string]Try
	// cases are the cases the runner planned (RunConfig.Cases), in order.
	cases    []catalog.Case
	recorder *faults.Recorder
	// baseline checks a cell before each case (nil: Env.checkBaseline).
	baseline func(context.Context, *Env) error
	// roots are the run's trusted roots (the gRPC and the QUIC plane's);
	// wrong is the wrong root alone.
	roots *x509.CertPool
	wrong *x509.CertPool

	mu      sync.Mutex
	current *deploy.Result
	// broken remembers cells whose deployment failed, so their other cases
	// fail at once instead of waiting for the same failure again.
	broken map[matrix.Cell]error
	// baselineBad remembers cells whose baseline was broken before their
	// last case.
	baselineBad map[matrix.Cell]bool
	// baselineMet says the current deployment's baseline held once: a
	// broken one later is a recovery from an earlier case's fault, waited
	// for in full, not a base component's refusal judged at once.
	baselineMet bool
	logFile     *os.File

	// baseMu guards deploying and ingressSeen. It is not mu: the deploy's
	// wait, which Use runs holding mu, reads them.
	baseMu sync.Mutex
	// deploying is the cell Use deploys now.
	deploying matrix.Cell
	// ingressSeen holds, per cell, the ingress pods' counts when a base
	// watch first read them (baseWatch.ingress): every watch of the cell
	// counts the refusals made since, so a Pylon that retries seldom is
	// still seen by the cell's later cases.
	ingressSeen map[matrix.Cell]map[string]map[string]int
}

// Connect loads what a RunConfig names and prepares the deployer; it
// deploys nothing yet (Use does, per cell).
func Connect(cfg *catalog.RunConfig) (*World, error) {
	// The runner planned the run; the suite runs its cases as named, and
	// refuses a run config naming a case the catalogue does not have,
	// before it touches anything.
	catalogue := catalog.Catalogue()
	cases, err := catalog.Resolve(catalogue, cfg.Cases)
	if err != nil {
		return nil, fmt.Errorf("run config: %w", err)
	}
	if len(cases) == 0 && cfg.Campaign == nil {
		return nil, fmt.Errorf("run config: no cases to run")
	}
	if err := stepsOf(tries, cases); err != nil {
		return nil, fmt.Errorf("run config: %w", err)
	}
	first := cfg.Campaign.CellOr(cases)
	topo := cfg.Topology
	m, err := pki.Load(cfg.PKIDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Artifacts, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts folder: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(cfg.Artifacts, catalog.SuiteLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("suite log: %w", err)
	}
	log := slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := &World{Config: cfg, Topology: topo, PKI: m, Log: log, logFile: lf, catalogue: catalogue, tries: tries, cases: cases,
		recorder: faults.NewRecorder(cfg.StateDir, log.With("component", "faults"))}
	if w.Build, err = buildOf(context.Background(), cfg); err != nil {
		return nil, fmt.Errorf("run config: what the components accept: %w", err)
	}
	log.Info("components' build", "build", w.Build.Name)
	if w.roots, err = w.pool(pki.Root, pki.QUICRoot); err != nil {
		return nil, err
	}
	if w.wrong, err = w.pool(pki.WrongRoot); err != nil {
		return nil, err
	}
	contexts := map[string]string{}
	for _, c := range cfg.Environment.Clusters {
		contexts[c.Name] = c.Context
	}
	w.deployer, err = deploy.New(deploy.Options{
		Kubeconfig: cfg.Environment.Kubeconfig,
		Contexts:   contexts,
		Topology:   topo,
		PKI:        m,
		Cell:       first,
		Images:     cfg.Images,
		Flavor:     cfg.Flavor,
		Build:      &w.Build,
		Defect:     cfg.Defect,
		// The wait for the base Pylon reads the base components'
		// refusals, and a typed one ends it (BaseFailure).
		BaseRefusals: func() deploy.RefusalWatch {
			w.baseMu.Lock()
			cell := w.deploying
			w.baseMu.Unlock()
			return w.Env(&deploy.Result{Cell: cell, Namespace: manifests.Namespace}, "").newBaseWatch().watch
		},
		// The mutual-TLS profile of the tunnel, where the build has it; its
		// cases are skipped elsewhere (Requirements.Features).
		ClientTLS: w.Build.Supports(nvcfbuild.TunnelClientCert),
		Logger:    log.With("component", "deploy"),
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// errCellBroken is wrapped when a cell's deployment already failed in this run.
var errCellBroken = errors.New("the cell did not deploy earlier in this run")

// cellDeployer is what the World needs of a *deploy.Deployer.
type cellDeployer interface {
	Switch(ctx context.Context, cell matrix.Cell) (*deploy.Result, error)
	Apply(ctx context.Context) (*deploy.Result, error)
	Client(cluster string) (kubernetes.Interface, error)
	DeletePod(ctx context.Context, cluster, name string) error
	WaitStargates(ctx context.Context, cluster string) error
	ApplyPylonVariant(ctx context.Context, name string, o deploy.PylonOverrides) (*deploy.Variant, error)
	DeletePylonVariant(ctx context.Context, name string) error
}

// Close releases the World's files.
func (w *World) Close() error {
	if w.logFile == nil {
		return nil
	}
	return w.logFile.Close()
}

// Plan lists the World's cases: those the runner planned (RunConfig.Cases),
// in its order, narrowed to the run config's Only tests when it names any.
// It plans nothing itself.
func (w *World) Plan() []catalog.Case {
	var out []catalog.Case
	for _, c := range w.cases {
		if w.wanted(c.Name()) || (!c.Scenario.Expect.IsPass() && w.wanted(c.ControlConfigName())) {
			out = append(out, c)
		}
	}
	return out
}

// wanted reports whether the test called name is to run.
func (w *World) wanted(name string) bool {
	return w.Config == nil || len(w.Config.Only) == 0 || slices.Contains(w.Config.Only, name)
}

// Tests counts the tests of cases that run (see Features).
func (w *World) Tests(cases []catalog.Case) int {
	n := 0
	for _, p := range catalog.PlannedResults(cases) {
		if w.wanted(p.Name) {
			n++
		}
	}
	return n
}

// stepsOf checks that every case of cases, and its positive control, has
// its steps in tries.
func stepsOf(tries map[string]Try, cases []catalog.Case) error {
	for _, c := range cases {
		for _, id := range []string{c.Scenario.ID, c.Scenario.Control} {
			if _, ok := tries[id]; id != "" && !ok {
				return fmt.Errorf("case %s: scenario %s has no steps (tries.go)", c.Name(), id)
			}
		}
	}
	return nil
}

// scenario looks an ID up in the World's catalogue.
func (w *World) scenario(id string) (catalog.Scenario, bool) {
	for _, s := range w.catalogue {
		if s.ID == id {
			return s, true
		}
	}
	return catalog.Scenario{}, false
}

// pool loads CA certificates of the PKI into a pool of their own.
func (w *World) pool(ps ...pki.Purpose) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for _, p := range ps {
		a, err := w.PKI.Find(p, "")
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(w.PKI.Path(a))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s %q holds no certificate", p, w.PKI.Path(a))
		}
	}
	return pool, nil
}

// Use deploys cell unless it is the one deployed now, and returns the
// deployment. Cells share clusters: switching cells re-applies only what
// differs.
func (w *World) Use(ctx context.Context, cell matrix.Cell) (*deploy.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cell = cell.Normalize()
	if w.current != nil && w.current.Cell == cell {
		return w.current, nil
	}
	if err := w.broken[cell]; err != nil {
		return nil, fmt.Errorf("%w: cell %s: %w", errCellBroken, cell.Name(), err)
	}
	start := time.Now()
	w.baseMu.Lock()
	w.deploying = cell
	w.baseMu.Unlock()
	w.Progress.Note("deploying cell %s: applying its manifests in every cluster and waiting for the rollouts", cell.Name())
	r, err := w.deployer.Switch(ctx, cell)
	if err != nil {
		w.current = nil
		if w.broken == nil {
			w.broken = map[matrix.Cell]error{}
		}
		w.broken[cell] = err
		return nil, fmt.Errorf("deploy cell %s: %w", cell.Name(), err)
	}
	w.Log.Info("cell deployed", "cell", cell.Name(), "took", time.Since(start).Round(time.Millisecond))
	w.Progress.Note("cell %s deployed in %s", cell.Name(), time.Since(start).Round(100*time.Millisecond))
	w.current, w.baselineMet = r, false
	return r, nil
}

// Refresh re-reads the deployment of the current cell (after a scenario
// replaced pods) by applying it again, which waits for readiness.
func (w *World) Refresh(ctx context.Context) (*deploy.Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.current == nil {
		return nil, fmt.Errorf("no cell deployed")
	}
	r, err := w.deployer.Apply(ctx)
	if err != nil {
		return nil, err
	}
	w.current = r
	return r, nil
}

// Kube returns the clientset of a cluster.
func (w *World) Kube(cluster string) (kubernetes.Interface, error) { return w.deployer.Client(cluster) }

// Env returns the environment one case runs in, with its own prober (so
// its transcript is the case's) and evidence folder.
func (w *World) Env(res *deploy.Result, evidence string) *Env {
	return &Env{
		World:    w,
		Deployed: res,
		Probe:    probe.New(probe.Options{DNS: w.Config.Environment.DNS, Logger: w.Log.With("component", "probe")}),
		Evidence: evidence,
	}
}

// checkBaseline checks the cell's baseline before a case: it waits for it
// (a case before may have disturbed it on purpose) unless it was broken
// before the previous case of the cell too, when one short look decides,
// so a broken cell blocks its cases at once. For a case that asserts the
// baseline (short) it only looks for a base failure, shortly, and leaves
// the rest to the case's own steps and the next case's check.
func (w *World) checkBaseline(ctx context.Context, e *Env, short bool) error {
	if w.baseline != nil {
		return w.baseline(ctx, e)
	}
	// Long enough for a base failure to be established again.
	const shortLook = baseConfirm + 5*time.Second
	cell := e.Deployed.Cell
	w.mu.Lock()
	d, early := waitConverge, !w.baselineMet
	if w.baselineBad[cell] || short {
		d = shortLook
	}
	w.mu.Unlock()
	err := e.checkBaseline(ctx, d, early)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.baselineBad == nil {
		w.baselineBad = map[matrix.Cell]bool{}
	}
	w.baselineBad[cell] = err != nil
	w.baselineMet = w.baselineMet || err == nil
	return err
}

// Scale multiplies a wait deadline by the run's time scale.
func (w *World) Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * w.Config.TimeScale)
}

// ingressFirstSeen is the map of the cell's ingress counts at first sight
// (World.ingressSeen), which every base watch of the cell shares.
func (w *World) ingressFirstSeen(cell matrix.Cell) map[string]map[string]int {
	w.baseMu.Lock()
	defer w.baseMu.Unlock()
	if w.ingressSeen == nil {
		w.ingressSeen = map[matrix.Cell]map[string]map[string]int{}
	}
	m := w.ingressSeen[cell]
	if m == nil {
		m = map[string]map[string]int{}
		w.ingressSeen[cell] = m
	}
	return m
}
