package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// shard is the part of a run's plan that one environment runs.
type shard struct {
	// name is the environment's: the topology's for the first, then
	// <topology>-2, <topology>-3…
	name string
	// cases are the shard's part of the plan, in plan order.
	cases []catalog.Case
	// artifacts holds the shard's suite output and evidence: the run's
	// folder when the run has one environment, <artifacts>/<name> else.
	artifacts string
	// stateDir is the environment's state folder (its faults journal).
	stateDir string
}

// EnvironmentName is the name of a run's i-th (0-based) environment of
// topology: the topology's name, then <topology>-2, <topology>-3…
func EnvironmentName(topology string, i int) string {
	if i == 0 {
		return topology
	}
	return topology + "-" + strconv.Itoa(i+1)
}

// EnvironmentArtifacts is the folder of the i-th of n environments' suite
// output and evidence within a run's artifacts folder: the folder itself
// when the run has one environment, <artifacts>/<environment> else.
func EnvironmentArtifacts(artifacts, topology string, i, n int) string {
	if n <= 1 {
		return artifacts
	}
	return filepath.Join(artifacts, EnvironmentName(topology, i))
}

// IsEnvironmentOf reports whether name is one of the environments a run of
// topology brings up (see EnvironmentName).
func IsEnvironmentOf(topology, name string) bool {
	if name == topology {
		return true
	}
	n, ok := strings.CutPrefix(name, topology+"-")
	i, err := strconv.Atoi(n)
	return ok && err == nil && i >= 2 && EnvironmentName(topology, i-1) == name
}

// shards names the environments for the parts of the plan.
func (o *Options) shards(parts [][]catalog.Case) []shard {
	out := make([]shard, len(parts))
	for i, p := range parts {
		s := shard{name: EnvironmentName(o.Topology.Name, i), cases: p, stateDir: o.StateDir,
			artifacts: EnvironmentArtifacts(o.Artifacts, o.Topology.Name, i, len(parts))}
		if i > 0 {
			s.stateDir += "-" + strconv.Itoa(i+1)
		}
		out[i] = s
	}
	return out
}

// runShards runs every shard at the same time, each on its environment,
// and returns their results together; reused says the first environment
// ran before the run. The environments come up one after another, the
// first as if alone (it refuses to start beside an unrelated one), each
// suite as soon as its environment is up. A shard that fails to run (its
// environment does not come up, say) stops the others. The environments
// the run brought up go down together at the end, unless it keeps them:
// the first one's state folder holds the PKI every shard deploys from.
func (o *Options) runShards(ctx context.Context, hb *heartbeat, cfg catalog.RunConfig, shards []shard) (results []reports.CaseResult, reused bool, testErr, err error) {
	// When the run is cut (Ctrl-C, or one shard's failure stopping the
	// others), what the cases in flight saw afterwards is no verdict. The
	// shards' context ends only through cut, which notes the time first,
	// so every case the cut reached ended after that time.
	parent := ctx
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	var cutMu sync.Mutex
	var cutAt time.Time
	cut := func(cause error) {
		cutMu.Lock()
		if cutAt.IsZero() {
			cutAt = time.Now()
		}
		cutMu.Unlock()
		cancel(cause)
	}
	stopCut := context.AfterFunc(parent, func() { cut(context.Cause(parent)) })
	defer stopCut()
	type outcome struct {
		results         []reports.CaseResult
		reused          bool
		testErr, runErr error
	}
	outs := make([]outcome, len(shards))
	var downMu sync.Mutex
	var down []string // the environments this run brought up
	defer func() {
		if o.Keep {
			return
		}
		var wg sync.WaitGroup
		errs := make([]error, len(down))
		for i, name := range down {
			wg.Go(func() {
				if derr := o.Provider.Down(context.WithoutCancel(ctx), name); derr != nil {
					errs[i] = fmt.Errorf("bring down environment %q: %w", name, derr)
				}
			})
		}
		wg.Wait()
		err = errors.Join(append([]error{err}, errs...)...)
	}()
	up := make([]chan struct{}, len(shards)+1) // up[i+1] closes when shard i's Up returned
	for i := range up {
		up[i] = make(chan struct{})
	}
	close(up[0])
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Go(func() {
			out := &outs[i]
			out.results, out.reused, out.testErr, out.runErr = o.runShard(ctx, hb, cfg, s, i, len(shards), up[i], up[i+1], func() {
				downMu.Lock()
				defer downMu.Unlock()
				down = append(down, s.name)
			})
			if out.runErr != nil {
				cut(out.runErr)
			}
		})
	}
	wg.Wait()
	var testErrs, runErrs []error
	for _, out := range outs {
		results = append(results, out.results...)
		testErrs, runErrs = append(testErrs, out.testErr), append(runErrs, out.runErr)
	}
	cutMu.Lock()
	at := cutAt
	cutMu.Unlock()
	if !at.IsZero() {
		why := "the interrupt"
		if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
			why = "the run stopping (" + cause.Error() + ")"
		}
		results, _ = reports.CutShort(results, at, why)
	}
	return results, outs[0].reused, errors.Join(testErrs...), errors.Join(runErrs...)
}

// runShard brings shard s's environment up (beside the run's others) and
// runs its part of the plan there; broughtUp records an environment that
// did not run before, for the run to bring down.
//
// It brings its environment up after after closes, and closes upped once
// Up returned.
func (o *Options) runShard(ctx context.Context, hb *heartbeat, cfg catalog.RunConfig, s shard, i, n int, after <-chan struct{}, upped chan<- struct{}, broughtUp func()) (results []reports.CaseResult, reused bool, testErr, err error) {
	log := o.Logger.With("environment", s.name)
	upOnce := sync.OnceFunc(func() { close(upped) })
	defer upOnce()
	<-after
	if _, serr := o.Provider.Status(ctx, s.name); serr == nil {
		reused = true
	}
	log.Info("bringing up clusters", "topology", o.Topology.Name, "reuse", reused)
	hb.Doing("bringing up environment %s of topology %s (%d of %d; reusing a running one: %t)", s.name, o.Topology.Name, i+1, n, reused)
	spec := clusters.SpecOf(o.Topology)
	spec.Name = s.name
	opts := []clusters.UpOption{clusters.WithLogger(log), clusters.WithProgress(hb)}
	if i > 0 || o.sideRunning(ctx) {
		opts = append(opts, clusters.WithBeside())
	}
	env, err := o.Provider.Up(ctx, spec, opts...)
	upOnce()
	if err != nil {
		return nil, reused, nil, fmt.Errorf("bring up environment %q of topology %q: %w", s.name, o.Topology.Name, err)
	}
	if !reused {
		broughtUp()
	}
	if o.Keep || reused {
		log.Info("leaving the clusters up", "down", o.downHint())
	}
	// The suite runs exactly the shard's part of the plan, in its order.
	cfg.Environment, cfg.StateDir, cfg.Artifacts = env, s.stateDir, s.artifacts
	cfg.Cases = catalog.CaseNames(s.cases)
	if err := clearCases(s.artifacts); err != nil {
		return nil, reused, nil, err
	}
	planned := catalog.PlannedResults(s.cases)
	label := ""
	if n > 1 {
		// The environment's part is named in its folder's plan.txt too,
		// and its progress lines say where it runs.
		label = s.name
		if err := os.MkdirAll(s.artifacts, 0o755); err != nil {
			return nil, reused, nil, fmt.Errorf("artifacts of environment %q: %w", s.name, err)
		}
		if err := writePlan(s.artifacts, planned); err != nil {
			return nil, reused, nil, err
		}
	}
	testErr = o.whileEnvironmentLives(ctx, s.name, func(ctx context.Context) (testErr error) {
		results, testErr, err = o.runAttempts(ctx, hb, cfg, planned, label)
		return testErr
	})
	return slices.Clip(results), reused, testErr, err
}

// maxSide bounds the side environments (<topology>-2…) a run looks for
// when it starts its first environment.
const maxSide = 8

// sideRunning reports whether a side environment of the run's topology
// runs: one that an earlier run left (killed with its environments up,
// say). The first environment then comes up beside it rather than being
// refused, as it would be beside an unrelated environment.
func (o *Options) sideRunning(ctx context.Context) bool {
	for i := 1; i < maxSide; i++ {
		if _, err := o.Provider.Status(ctx, EnvironmentName(o.Topology.Name, i)); err == nil {
			return true
		}
	}
	return false
}

// suiteLogs names the suite logs of the run's environments.
func suiteLogs(shards []shard) string {
	var logs []string
	for _, s := range shards {
		logs = append(logs, filepath.Join(s.artifacts, catalog.SuiteLog))
	}
	return strings.Join(logs, ", ")
}
