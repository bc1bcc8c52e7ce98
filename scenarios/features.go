package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/features"
	"sigs.k8s.io/e2e-framework/pkg/types"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// caseTimeout bounds one case, before the run's time scale.
const caseTimeout = 6 * time.Minute

// Features turns the plan of one cell into e2e-framework features: one per
// case, and for each fail-closed case one more that runs it with its
// control's configuration.
func (w *World) Features(cases []catalog.Case) []types.Feature {
	var out []types.Feature
	for _, c := range cases {
		if w.wanted(c.Name()) {
			out = append(out, w.caseFeature(c))
		}
		if !c.Scenario.Expect.IsPass() && w.wanted(c.ControlConfigName()) {
			out = append(out, w.controlConfigFeature(c))
		}
	}
	return out
}

// CellRun is how the tests of one cell run: Lead first and alone (its
// setup deploys the cell), then Together at the same time, at most
// RunConfig.Parallel at once, then Rest one after another. Together holds
// the tests of isolated scenarios (Scenario.Isolated), Rest every other.
// Test names do not change with the order.
type CellRun struct {
	Lead, Together, Rest []types.Feature
}

// CellRun splits the plan of one cell (see CellRun); with
// RunConfig.Parallel at 1 or less every test is in Rest, in plan order.
func (w *World) CellRun(cases []catalog.Case) CellRun {
	var run CellRun
	for _, c := range cases {
		fs := w.Features([]catalog.Case{c})
		switch {
		case len(fs) == 0:
			continue
		case w.Config.Parallel <= 1:
			run.Rest = append(run.Rest, fs...)
			continue
		case run.Lead == nil:
			run.Lead, fs = fs[:1], fs[1:]
		}
		if c.Scenario.Isolated() {
			run.Together = append(run.Together, fs...)
		} else {
			run.Rest = append(run.Rest, fs...)
		}
	}
	return run
}

// caseRun is one feature's state, shared by its steps.
type caseRun struct {
	w      *World
	c      catalog.Case
	kind   string
	name   string
	env    *Env
	start  time.Time
	result reports.CaseResult
}

func (w *World) newRun(c catalog.Case, kind string) *caseRun {
	r := c.Test(kind)
	r.Evidence = reports.EvidenceDir(w.Config.Artifacts, r.Name)
	return &caseRun{w: w, c: c, kind: kind, name: r.Name, result: r}
}

// setup deploys the case's cell (a no-op when it is deployed already).
func (r *caseRun) setup(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
	r.start = time.Now()
	r.result.Start = r.start
	r.w.Progress.Start(r.name)
	r.skipUnsupported(t)
	res, err := r.w.Use(ctx, r.c.Cell)
	r.step("deploy cell "+r.c.Cell.Name(), r.start, err)
	if err != nil {
		if !errors.Is(err, errCellBroken) {
			// The first case of a broken cell keeps the evidence of why.
			r.env = r.w.Env(&deploy.Result{Cell: r.c.Cell, Namespace: manifests.Namespace}, r.result.Evidence)
		}
		if f := baseFailureIn(err); f != nil {
			r.baseFailed(ctx, t, f)
		}
		r.fail(ctx, t, reports.Error, fmt.Sprintf("could not deploy cell %s: %v", r.c.Cell.Name(), err), nil)
	}
	r.env = r.w.Env(res, r.result.Evidence)
	err = r.w.checkBaseline(ctx, r.env, r.c.Scenario.AssertsBaseline)
	if f := baseFailureIn(err); f != nil {
		r.baseFailed(ctx, t, f)
	}
	// A scenario that asserts the baseline gives the verdict on it in its
	// own steps, unless a base component refused (above).
	if err != nil && !r.c.Scenario.AssertsBaseline {
		r.fail(ctx, t, reports.Error, blocked(err), nil)
	}
	return ctx
}

// baseFailed ends a case of a cell whose base component refused before
// it ran (f): a case whose scenario asserts that part of the base path
// fails with f's reason and origin; any other is an error that names f.
// Never a pass.
func (r *caseRun) baseFailed(ctx context.Context, t *testing.T, f *BaseFailure) {
	t.Helper()
	r.step("the cell's base components refuse nothing", r.start, f)
	if r.kind == catalog.KindCase && baseAsserts(r.c.Scenario, f) {
		if judged := judge(r.c.Scenario.Expect, f); judged != nil {
			r.fail(ctx, t, reports.Fail, judged.Error(), f)
		}
	}
	r.fail(ctx, t, reports.Error, blockedBy(f), nil)
}

// try runs s's steps (World.tries) with setting under the case's deadline.
func (r *caseRun) try(ctx context.Context, s catalog.Scenario, setting Setting) error {
	try, ok := r.w.tries[s.ID]
	if !ok {
		return stepFailed("find the steps of "+s.ID, errors.New("no steps are attached to this scenario (tries.go)"))
	}
	ctx, cancel := context.WithTimeout(ctx, r.w.Scale(caseTimeout))
	defer cancel()
	return try(ctx, r.env, setting)
}

// control runs the positive control of a fail-closed case; its failure
// turns the case into an error.
func (r *caseRun) control(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
	ctl, ok := r.w.scenario(r.c.Scenario.Control)
	if !ok {
		r.fail(ctx, t, reports.Error, fmt.Sprintf("positive control %q is not in the catalogue", r.c.Scenario.Control), nil)
	}
	start := time.Now()
	err := r.try(ctx, ctl, AsControl)
	r.step("positive control "+ctl.ID+" passes", start, err)
	if err != nil {
		r.skipWithoutSeam(t, err)
		r.fail(ctx, t, reports.Error, fmt.Sprintf("positive control %s failed in cell %s, so the fail-closed result of %s is an error, not a pass: %v",
			ctl.ID, r.c.Cell.Name(), r.c.Scenario.ID, err), err)
	}
	return ctx
}

// assess runs the case and judges it.
func (r *caseRun) assess(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
	s := r.c.Scenario
	start := time.Now()
	observed := r.try(ctx, s, Faulty)
	r.skipWithoutSeam(t, observed)
	judged := judge(s.Expect, observed)
	r.step(s.Expect.String(), start, judged)
	r.stepsRan(ctx, t, observed)
	if err := judged; err != nil {
		r.fail(ctx, t, reports.Fail, err.Error(), observed)
	}
	r.pass(observed)
	return ctx
}

// assessControlConfig runs a fail-closed scenario with its control's
// configuration and requires its expectation to be missed.
func (r *caseRun) assessControlConfig(ctx context.Context, t *testing.T, _ *envconf.Config) context.Context {
	s := r.c.Scenario
	start := time.Now()
	observed := r.try(ctx, s, AsControl)
	r.skipWithoutSeam(t, observed)
	r.step("with "+s.Control+"'s configuration the refusal disappears", start, observed)
	r.stepsRan(ctx, t, observed)
	if judge(s.Expect, observed) == nil {
		r.fail(ctx, t, reports.Fail, fmt.Sprintf("with %s's configuration the scenario still observed %s (%v): its refusal is not caused by the faulty ingredient",
			s.Control, s.Expect, observed), observed)
	}
	if observed != nil {
		r.fail(ctx, t, reports.Fail, fmt.Sprintf("with %s's configuration the steps should succeed, got: %v", s.Control, observed), observed)
	}
	r.pass(nil)
	return ctx
}

// stepsRan makes the case an Error when one of the harness's own steps
// failed (stepError), whatever else was observed: it is judged first, so
// a refusal beside it cannot pass the case.
func (r *caseRun) stepsRan(ctx context.Context, t *testing.T, observed error) {
	t.Helper()
	if se := stepFailure(observed); se != nil {
		r.fail(ctx, t, reports.Error, fmt.Sprintf("a step of the case failed, so it has no verdict: %v (everything observed: %v)", se, observed), observed)
	}
}

// skipWithoutSeam records the case as skipped, with the reason, when a
// fault it needs has no network seam on this provider (clusters reached by
// kubeconfig only): not a verdict on the system under test.
func (r *caseRun) skipWithoutSeam(t *testing.T, observed error) {
	t.Helper()
	// No seam for a fault, or nothing the system under test exposes can
	// prove the claim (a real Stargate): no verdict either way.
	if !errors.Is(observed, faults.ErrNoSeam) && !errors.Is(observed, ErrNotProven) {
		return
	}
	r.result.Outcome, r.result.Message = reports.Skip, observed.Error()
	r.finish()
	t.Skipf("%s: skipped: %v", r.name, observed)
}

// skipUnsupported records the case as skipped, before anything is
// deployed, when the components' build lacks a feature its cell or its
// scenario needs (a real Pylon without --grpc-tls-ca-cert-path, say): the
// message says "unsupported by this build" and names the flag. Not a
// verdict on the system under test, and never a pass.
func (r *caseRun) skipUnsupported(t *testing.T) {
	t.Helper()
	err := r.w.unsupported(r.c)
	if err == nil {
		return
	}
	r.result.Outcome, r.result.Message = reports.Skip, err.Error()
	r.step("the build supports what the case needs", r.start, err)
	r.finish()
	t.Skipf("%s: skipped: %v", r.name, err)
}

// pass records a passing case.
func (r *caseRun) pass(observed error) {
	r.result.Outcome = reports.Pass
	r.result.Observed = observedReason(observed)
	if observed != nil {
		r.result.Message = observed.Error()
	}
	r.finish()
}

// fail records the case, collects evidence and fails the test with a
// message saying what was expected, what happened and where the evidence is.
func (r *caseRun) fail(ctx context.Context, t *testing.T, o reports.Outcome, msg string, observed error) {
	t.Helper()
	r.result.Outcome, r.result.Message = o, msg
	r.result.Observed = observedReason(observed)
	if r.env != nil {
		if err := r.env.collect(ctx); err != nil {
			msg += " (" + err.Error() + ")"
		}
	}
	r.finish()
	t.Fatalf("%s: %s\nevidence (component logs, pod status, /status documents, probe transcript): %s", r.name, msg, r.result.Evidence)
}

func (r *caseRun) finish() {
	r.result.Duration = time.Since(r.start)
	if r.env != nil {
		r.result.Faults = r.env.Faults()
		r.result.Proof = r.env.Proofs()
		if err := r.env.writeTranscript(); err != nil {
			r.w.Log.Warn("write transcript", "case", r.name, "err", err)
		}
	}
	if err := reports.WriteCase(r.result); err != nil {
		r.w.Log.Warn("write case result", "case", r.name, "err", err)
	}
	r.w.Progress.End(r.name, r.result.Outcome, r.result.Message)
}

// step records one step of the case: it started at start and ended with err.
func (r *caseRun) step(name string, start time.Time, err error) {
	st := reports.Step{Name: name, Outcome: reports.Pass, Duration: time.Since(start)}
	if err != nil {
		st.Outcome, st.Message = reports.Fail, err.Error()
	}
	r.result.Steps = append(r.result.Steps, st)
}

func (w *World) caseFeature(c catalog.Case) types.Feature {
	r := w.newRun(c, catalog.KindCase)
	b := features.New(c.Name()).
		WithLabel("layer", string(c.Scenario.Layer)).
		WithLabel("cell", c.Cell.Name()).
		Setup(r.setup)
	if !c.Scenario.Expect.IsPass() {
		b = b.Assess("positive control "+c.Scenario.Control+" passes", r.control)
	}
	return b.Assess(strings.ReplaceAll(c.Scenario.Expect.String(), "|", " or "), r.assess).Feature()
}

func (w *World) controlConfigFeature(c catalog.Case) types.Feature {
	r := w.newRun(c, catalog.KindControlConfig)
	return features.New(c.ControlConfigName()).
		WithLabel("layer", string(c.Scenario.Layer)).
		WithLabel("cell", c.Cell.Name()).
		Setup(r.setup).
		Assess("with "+c.Scenario.Control+"'s configuration the refusal disappears", r.assessControlConfig).
		Feature()
}
