package scenarios

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/types"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// fakeDeployer deploys nothing: every cell is "deployed" at once.
type fakeDeployer struct{ switches int }

func (f *fakeDeployer) Switch(_ context.Context, c matrix.Cell) (*deploy.Result, error) {
	f.switches++
	if c.Workload == matrix.Deployment {
		return nil, errors.New("deployment cells do not deploy in this test")
	}
	if c.Discovery == matrix.DNS && c.Workload == matrix.StatefulSet {
		return nil, fmt.Errorf("cluster %q: %w", "workers", errPlaintextBase)
	}
	return &deploy.Result{Cell: c, Namespace: "nvcf", BootstrapCluster: "region-a"}, nil
}
func (f *fakeDeployer) Apply(context.Context) (*deploy.Result, error) { return nil, errors.New("fake") }
func (f *fakeDeployer) Client(string) (kubernetes.Interface, error) {
	return nil, errors.New("no clusters in this test")
}
func (f *fakeDeployer) DeletePod(context.Context, string, string) error { return errors.New("fake") }
func (f *fakeDeployer) WaitStargates(context.Context, string) error     { return errors.New("fake") }
func (f *fakeDeployer) ApplyPylonVariant(_ context.Context, name string, _ deploy.PylonOverrides) (*deploy.Variant, error) {
	return &deploy.Variant{Name: name, Cluster: "workers", Deployment: "pylon-" + name, InferenceServerID: "echo-pylon-" + name}, nil
}

// errCleanup is the fake's failure to delete a variant.
var errCleanup = errors.New("pods of pylon variant nvcf/pylon-x still there after 2m")

func (f *fakeDeployer) DeletePylonVariant(context.Context, string) error { return errCleanup }

var errBaseline = errors.New("region-a has 1 of 2 Stargate replicas ready")

// errPlaintextBase is the base failure of the DNS StatefulSet cell's deploy:
// its base Pylon dials the TLS ingress in plaintext.
var errPlaintextBase = &BaseFailure{Reason: reason.PlaintextToTLS, Origin: reason.OriginIngress, Part: basePylonGRPC,
	Subject: "the base Pylon", Where: "refused at region-a's ingress", Evidence: "region-a's ingress (ingress-0) refused 3 connection(s) with plaintext-to-tls"}

// errTrustBase is the base failure the DNS mixed cell's baseline
// check finds: its base Pylon refuses the ingress's certificate.
var errTrustBase = &BaseFailure{Reason: reason.UnknownAuthority, Origin: reason.OriginPylon, Part: basePylonGRPC,
	Subject: "the base Pylon", Where: "refused by the base Pylon itself", Evidence: "the base Pylon's /status: …"}

var errRefused = reason.Wrap(reason.UnknownAuthority, errors.New("x509: certificate signed by unknown authority"))

// fakeCatalogue holds one scenario per way a case can end, and its steps.
func fakeCatalogue() ([]catalog.Scenario, map[string]Try) {
	ok := func(context.Context, *Env, Setting) error { return nil }
	refusedUnlessControl := func(_ context.Context, _ *Env, s Setting) error {
		if s == AsControl {
			return nil
		}
		return errRefused
	}
	always := func(context.Context, *Env, Setting) error { return errRefused }
	broken := func(context.Context, *Env, Setting) error { return errors.New("the control broke") }
	timeout := func(context.Context, *Env, Setting) error { return reason.Wrap(reason.Timeout, errors.New("slow")) }
	// The refusal is right, but deleting the variant fails afterwards.
	dirty := func(ctx context.Context, e *Env, s Setting) error {
		return e.WithPylon(ctx, PylonVariant{Name: "x"}, func(context.Context, *deploy.Variant) error {
			return refusedUnlessControl(ctx, e, s)
		})
	}
	fc := catalog.FailClosed(reason.UnknownAuthority)
	// A scenario whose verdict a broken base Pylon is (baseAsserted).
	pylonVerified := func(_ context.Context, e *Env, _ Setting) error {
		if e.Deployed.Cell.Workload == matrix.Mixed {
			return reason.Wrap(reason.UnknownAuthority, errBaseline)
		}
		return nil
	}
	out := []catalog.Scenario{
		{ID: "tls/pylon-verified", Layer: catalog.LayerTLS, Expect: catalog.Pass, AssertsBaseline: true},
		{ID: "tls/ok", Layer: catalog.LayerTLS, Summary: "the fake works", Expect: catalog.Pass},
		{ID: "tls/broken", Layer: catalog.LayerTLS, Expect: catalog.Pass},
		{ID: "tls/refused", Layer: catalog.LayerTLS, Labels: []string{catalog.LabelProbe}, Expect: fc, Control: "tls/ok"},
		{ID: "tls/vacuous", Layer: catalog.LayerTLS, Labels: []string{catalog.LabelProbe}, Expect: fc, Control: "tls/ok"},
		{ID: "tls/bad-control", Layer: catalog.LayerTLS, Expect: fc, Control: "tls/broken"},
		{ID: "tls/wrong-reason", Layer: catalog.LayerTLS, Labels: []string{catalog.LabelProbe}, Expect: fc, Control: "tls/ok"},
		{ID: "tls/dirty", Layer: catalog.LayerTLS, Expect: fc, Control: "tls/ok"},
		// It asserts the baseline, so a broken baseline is its own failure.
		{ID: "tls/asserts-baseline", Layer: catalog.LayerTLS, Expect: catalog.Pass, AssertsBaseline: true},
	}
	tries := map[string]Try{
		"tls/pylon-verified": pylonVerified,
		"tls/ok":             ok,
		"tls/broken":         broken,
		"tls/refused":        refusedUnlessControl,
		"tls/vacuous":        always,
		"tls/bad-control":    refusedUnlessControl,
		"tls/wrong-reason":   timeout,
		"tls/dirty":          dirty,
		"tls/asserts-baseline": func(_ context.Context, e *Env, _ Setting) error {
			if e.Deployed.Cell.Workload == matrix.Mixed {
				return reason.Wrap(reason.UnknownAuthority, errBaseline)
			}
			return nil
		},
	}
	// Every one runs in the DNS cells too (whose bases break).
	for i := range out {
		out[i].Requires.Discoveries = matrix.Discoveries
	}
	return out, tries
}

// TestFakeSuite runs the fake catalogue through the real features; it is
// the child process of TestSuiteJudgesCases and does nothing otherwise.
func TestFakeSuite(t *testing.T) {
	dir := os.Getenv("SCENARIOS_FAKE_SUITE")
	if dir == "" {
		t.Skip("run by TestSuiteJudgesCases")
	}
	topo, err := topology.Parse([]byte("name: fake\nclusters: [{name: region-a, role: stargate}, {name: workers, role: workers}]\n"))
	require.NoError(t, err)
	cat, tries := fakeCatalogue()
	cells := []matrix.Cell{{Workload: matrix.StatefulSet, Trust: matrix.Bundle}, {Workload: matrix.Deployment, Trust: matrix.Bundle},
		{Workload: matrix.Mixed, Trust: matrix.Bundle},
		// Its deploy stops on a base failure; the next one's baseline check finds one.
		{Workload: matrix.StatefulSet, Trust: matrix.Bundle, Discovery: matrix.DNS}, {Workload: matrix.Mixed, Trust: matrix.Bundle, Discovery: matrix.DNS}}
	// As from the runner: the plan, by name, resolved against the catalogue.
	cfg := &catalog.RunConfig{Artifacts: dir, TimeScale: 1, Parallel: 3, Environment: &clusters.Environment{},
		Cases: catalog.CaseNames(catalog.Plan(cat, cells, catalog.Filter{}))}
	cases, err := catalog.Resolve(cat, cfg.Cases)
	require.NoError(t, err)
	require.NoError(t, stepsOf(tries, cases))
	w := &World{
		Config:    cfg,
		Topology:  topo,
		Log:       slog.New(slog.DiscardHandler),
		deployer:  &fakeDeployer{},
		catalogue: cat,
		tries:     tries,
		cases:     cases,
		// The mixed cell deploys, but something before left it broken.
		baseline: func(_ context.Context, e *Env) error {
			if e.Deployed.Cell.Discovery == matrix.DNS {
				return errTrustBase
			}
			if e.Deployed.Cell.Workload == matrix.Mixed {
				return errBaseline
			}
			return nil
		},
	}
	runCells(t, env.NewWithConfig(envconf.New()), w, w.Plan())
}

func TestSuiteJudgesCases(t *testing.T) {
	if os.Getenv("SCENARIOS_FAKE_SUITE") != "" {
		t.Skip("inside the child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeSuite$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SCENARIOS_FAKE_SUITE="+dir)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the fake suite holds failing cases, so it must fail:\n%s", out)
	require.Contains(t, string(out), "evidence (component logs, pod status, /status documents, probe transcript): "+dir)

	results, err := reports.LoadCases(dir)
	require.NoError(t, err)
	got := map[string]reports.Outcome{}
	broken, blockedCases := 0, 0
	baseFailed := map[string]int{}
	for _, r := range results {
		if f, ok := map[string]*BaseFailure{"workload=statefulset,trust=bundle,discovery=dns": errPlaintextBase,
			"workload=mixed,trust=bundle,discovery=dns": errTrustBase}[r.Cell]; ok {
			// A broken base Pylon: the case that asserts it fails with its
			// reason and origin, every other is an error naming it.
			if r.ID == "tls/pylon-verified" {
				require.Equal(t, reports.Fail, r.Outcome, r.Message)
				require.Equal(t, string(f.Reason), r.Observed)
				require.Contains(t, r.Message, `expected pass, got a failure with reason "`+string(f.Reason)+`"`)
				require.Contains(t, r.Message, "origin "+string(f.Origin))
				continue
			}
			require.Equal(t, reports.Error, r.Outcome, r.Name)
			require.Empty(t, r.Observed, "a blocked case claims no reason: %s", r.Name)
			require.True(t, strings.HasPrefix(r.Message, "blocked by "+f.Short()+", so the case has no verdict"), r.Message)
			baseFailed[r.Cell]++
			continue
		}
		if r.Cell == "workload=mixed,trust=bundle" && (strings.HasPrefix(r.Name, "tls/asserts-baseline") || r.ID == "tls/pylon-verified") {
			require.Equal(t, reports.Fail, r.Outcome, "a scenario that asserts the baseline is not blocked by it: %s", r.Message)
			require.Contains(t, r.Message, "unknown-authority", "its own verdict stands, with its reason")
			continue
		}
		if r.Cell == "workload=mixed,trust=bundle" {
			require.Equal(t, reports.Error, r.Outcome, "a broken baseline blocks %s instead of blaming it", r.Name)
			require.Equal(t, blocked(errBaseline), r.Message, r.Name)
			blockedCases++
			continue
		}
		if r.Cell == "workload=deployment,trust=bundle" {
			require.Equal(t, reports.Error, r.Outcome, r.Name)
			if strings.Contains(r.Message, errCellBroken.Error()) {
				broken++
			}
			continue
		}
		got[r.Name] = r.Outcome
	}
	require.Equal(t, 13, broken, "after the first failed deployment, the cell's other cases fail at once")
	require.Equal(t, 12, blockedCases, "every test of the cell with the broken baseline is blocked")
	require.Equal(t, map[string]int{"workload=statefulset,trust=bundle,discovery=dns": 13, "workload=mixed,trust=bundle,discovery=dns": 13}, baseFailed,
		"every other test of a cell whose base Pylon refused is an error naming the refusal")
	require.Contains(t, errPlaintextBase.Short(), "the base Pylon's plaintext-to-tls refused at region-a's ingress")
	cell := "[workload=statefulset,trust=bundle]"
	require.Equal(t, map[string]reports.Outcome{
		"tls/ok" + cell:                               reports.Pass,
		"tls/pylon-verified" + cell:                   reports.Pass,
		"tls/asserts-baseline" + cell:                 reports.Pass,
		"tls/broken" + cell:                           reports.Fail,
		"tls/refused" + cell:                          reports.Pass,
		"tls/refused/with-control-config" + cell:      reports.Pass,
		"tls/vacuous" + cell:                          reports.Pass,
		"tls/vacuous/with-control-config" + cell:      reports.Fail,  // refuses even with the control's configuration
		"tls/bad-control" + cell:                      reports.Error, // a failed control is an error, never a pass
		"tls/bad-control/with-control-config" + cell:  reports.Pass,
		"tls/wrong-reason" + cell:                     reports.Fail, // refused, but for another reason
		"tls/wrong-reason/with-control-config" + cell: reports.Fail,
		"tls/dirty" + cell:                            reports.Error, // the right refusal, but the cleanup failed
		"tls/dirty/with-control-config" + cell:        reports.Error,
	}, got, "output:\n%s", out)
	for _, r := range results {
		if r.Cell != "workload=statefulset,trust=bundle" {
			continue
		}
		_, err := os.Stat(r.Evidence + "/probe-transcript.txt")
		require.NoError(t, err, r.Name)
		if r.ID == "tls/dirty" {
			require.Contains(t, r.Message, `a step of the case failed, so it has no verdict: delete pylon variant "x": `+errCleanup.Error(), r.Name)
		}
		if r.ID == "tls/ok" {
			require.Equal(t, "the fake works", r.Description, "the scenario's summary describes its cases")
		}
	}
}

// A cell's first test runs alone (it deploys the cell), its isolated
// cases together, and every other case one after another, in plan order;
// with Parallel at 1 every test runs one after another.
func TestCellRunPutsOnlyIsolatedCasesTogether(t *testing.T) {
	cell := matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.System}
	fc := catalog.FailClosed(reason.UnknownAuthority)
	var cases []catalog.Case
	for _, s := range []catalog.Scenario{
		{ID: "tls/variant", Labels: []string{catalog.LabelPylon, catalog.LabelDeploys}, Expect: catalog.Pass},
		{ID: "quic/probe", Labels: []string{catalog.LabelProbe}, Expect: fc, Control: "quic/probe-ok"},
		{ID: "watch/across", Labels: []string{catalog.LabelProbe, catalog.LabelCrossRegion}, Expect: catalog.Pass},
		{ID: "resilience/fault", Labels: []string{catalog.LabelProbe, catalog.LabelFaults}, Expect: catalog.Pass},
		{ID: "discovery/pylon", Labels: []string{catalog.LabelProbe, catalog.LabelPylon}, Expect: catalog.Pass},
		{ID: "authority/rollout", Labels: []string{catalog.LabelProbe, catalog.LabelDeploys}, Expect: catalog.Pass},
	} {
		cases = append(cases, catalog.Case{Scenario: s, Cell: cell})
	}
	names := func(fs []types.Feature) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name())
		}
		return out
	}
	w := &World{Config: &catalog.RunConfig{Parallel: 4}}
	run := w.CellRun(cases)
	require.Equal(t, []string{cases[0].Name()}, names(run.Lead))
	require.Equal(t, []string{cases[1].Name(), cases[1].ControlConfigName(), cases[2].Name()}, names(run.Together),
		"only cases whose actors are the harness's probes run together, with their control-configuration twins")
	require.Equal(t, []string{cases[3].Name(), cases[4].Name(), cases[5].Name()}, names(run.Rest),
		"faults, the reference Pylon's state and rollouts are shared by the cell")

	w.Config.Parallel = 1
	run = w.CellRun(cases)
	require.Empty(t, run.Lead)
	require.Empty(t, run.Together)
	require.Equal(t, names(w.Features(cases)), names(run.Rest))
}
