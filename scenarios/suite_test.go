package scenarios

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/types"

	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

var (
	runConfig = flag.String("harness.run", "", "run config written by `harness run` (or set "+catalog.RunConfigEnv+")")

	testenv  env.Environment
	world    *World
	setupErr error
	// suiteCtx ends on Ctrl-C (or when the owner dies): TestCampaign's
	// context, which e2e-framework's features do not hand out.
	suiteCtx = context.Background()
)

func TestMain(m *testing.M) {
	flag.Parse()
	path := *runConfig
	if path == "" {
		path = os.Getenv(catalog.RunConfigEnv)
	}
	// Ctrl-C (which `harness run` forwards) cancels every case's context, so
	// waits end and injected faults are undone before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	suiteCtx = ctx
	var err error
	if testenv, err = env.NewWithContext(ctx, envconf.New()); err != nil {
		panic(err)
	}
	if path != "" {
		testenv.Setup(func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
			cfg, err := catalog.ReadRunConfig(path)
			if err == nil {
				err = WatchOwner(cfg.OwnerPID, stop)
			}
			if err == nil {
				world, err = Connect(cfg)
			}
			setupErr = err // reported by TestScenarios, so it lands in the JUnit report
			return ctx, nil
		})
		testenv.Finish(func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
			if world != nil {
				return ctx, world.Close()
			}
			return ctx, nil
		})
	}
	code := testenv.Run(m)
	stop()
	os.Exit(code)
}

// TestScenarios runs the planned cases cell by cell; each case is a
// feature named like "tls/wrong-root[workload=deployment,trust=bundle]".
// Within a cell the isolated cases run at the same time (World.CellRun).
func TestScenarios(t *testing.T) {
	if setupErr != nil {
		t.Fatalf("connect to the environment: %v", setupErr)
	}
	if world == nil {
		t.Skip("no environment given: the scenarios run against clusters brought up by `harness run` (make e2e); " +
			"to run them by hand, pass -args -harness.run=<artifacts>/run.json or set " + catalog.RunConfigEnv)
	}
	cases := world.Plan()
	if len(cases) == 0 {
		t.Skip("the run config's only tests name none of its cases")
	}
	// The runner shows these lines live (reports.ProgressMarker).
	world.Progress = reports.NewProgress(os.Stdout, reports.ProgressMarker, world.Tests(cases))
	runCells(t, testenv, world, cases)
}

// TestCampaign runs the fault campaign of the run config (`harness
// campaign`): its result file carries the verdicts; the test fails on a
// violation or an engine failure, so the suite's exit says it too.
func TestCampaign(t *testing.T) {
	if setupErr != nil {
		t.Fatalf("connect to the environment: %v", setupErr)
	}
	if world == nil || world.Config.Campaign == nil {
		t.Skip("no campaign in the run config: `harness campaign` runs one")
	}
	cc := *world.Config.Campaign
	res := RunCampaign(suiteCtx, world, cc)
	if err := WriteCampaignResult(cc.Result, res); err != nil {
		t.Fatalf("write the campaign's result: %v", err)
	}
	if res.Error != "" {
		t.Fatalf("campaign (no verdict): %s", res.Error)
	}
	for _, v := range res.Violations {
		t.Errorf("%s violated at t+%s: %s", v.Invariant, v.At, v.What)
	}
}

// runCells runs cases cell by cell through te, each cell as
// World.CellRun orders it.
func runCells(t *testing.T, te env.Environment, w *World, cases []catalog.Case) {
	for _, cell := range catalog.Cells(cases) {
		var inCell []catalog.Case
		for _, c := range cases {
			if c.Cell == cell {
				inCell = append(inCell, c)
			}
		}
		run := w.CellRun(inCell)
		if len(run.Lead) > 0 {
			te.Test(t, run.Lead...)
		}
		together(t, te, w.Config.Parallel, run.Together)
		if len(run.Rest) > 0 {
			te.Test(t, run.Rest...)
		}
	}
}

// together runs features at the same time, at most n at once, starting
// them in order; it returns when all have ended.
func together(t *testing.T, te env.Environment, n int, features []types.Feature) {
	slots := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for _, f := range features {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			te.Test(t, f)
		})
	}
	wg.Wait()
}
