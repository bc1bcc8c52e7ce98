// Package bench is `harness bench`: one run that measures what a developer
// waits for and what a machine pays. It brings the topology up from
// nothing (bring-up time), lets it idle and reads the resident memory of
// every process of every cluster, runs the matrix (wall time, or a subset
// chosen with the run's filters), and then times invocations through the
// reverse tunnel against direct calls to the echo server. It is a
// benchmark: it reports numbers and asserts none.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// Options configure a benchmark run.
type Options struct {
	// Run configures the matrix (topology, provider, filters, artifacts);
	// Run.Keep leaves the clusters up afterwards.
	Run harnessrun.Options
	// Memory lists the processes of a running environment with their
	// resident memory (local.Memory for the embedded provider).
	Memory func(env string) ([]local.ProcessMemory, error)
	// Idle is how long the fresh clusters idle before their memory is read
	// (default 20 s: the control planes' start-up garbage is collected by then).
	Idle time.Duration
	// Requests is the number of timed invocations per path (default 300).
	Requests int
}

// ReportFile is the report's name in the artifacts folder.
const ReportFile = "bench.md"

// Run performs the benchmark, writes ReportFile into the artifacts folder
// and prints it. A matrix that does not pass still yields the report; its
// error is returned after it.
func Run(ctx context.Context, o Options) (_ *Report, err error) {
	if o.Idle <= 0 {
		o.Idle = 20 * time.Second
	}
	if o.Requests <= 0 {
		o.Requests = 300
	}
	ro := o.Run
	log := ro.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := ro.Stdout
	if out == nil {
		out = io.Discard
	}
	topo := ro.Topology
	if topo == nil || ro.Provider == nil || ro.Artifacts == "" {
		return nil, errors.New("bench: topology, provider and artifacts folder are required")
	}
	if _, err := ro.Provider.Status(ctx, topo.Name); err == nil {
		return nil, fmt.Errorf("bench: environment %q is already up; the benchmark measures a fresh bring-up: run `harness down --topology %s` first", topo.Name, ro.TopologyRef)
	}
	rep := &Report{Topology: topo.Name, Started: time.Now().UTC()}

	log.Info("bench: bringing up", "topology", topo.Name)
	start := time.Now()
	env, err := ro.Provider.Up(ctx, clusters.SpecOf(topo), clusters.WithLogger(log), clusters.WithProgress(out))
	if err != nil {
		return nil, fmt.Errorf("bench: bring up %q: %w", topo.Name, err)
	}
	rep.BringUp = time.Since(start)
	keep := ro.Keep // the matrix below always keeps the clusters; this says whether bench does
	defer func() {
		if keep {
			return
		}
		if derr := ro.Provider.Down(context.WithoutCancel(ctx), topo.Name); derr != nil {
			err = errors.Join(err, fmt.Errorf("bench: bring down %q: %w", topo.Name, derr))
		}
	}()

	log.Info("bench: idling before reading memory", "for", o.Idle)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(o.Idle):
	}
	agents := newAgents(o.Memory, topo.Name, ro.Environments)
	if o.Memory != nil {
		procs, merr := o.Memory(topo.Name)
		if merr != nil {
			return nil, fmt.Errorf("bench: read memory: %w", merr)
		}
		rep.Idle = summarize(procs, len(env.Clusters))
		agents.pids[topo.Name] = rep.Idle.Agent.PID
	}

	log.Info("bench: running the matrix")
	ro.Keep = true // the tunnel is timed on the last cell's deployment
	sampler := startCPUSampler(agents.roots, time.Second)
	res, runErr := harnessrun.Run(ctx, ro)
	samples := sampler.Stop()
	if res != nil && !keep {
		// The run kept the environments it brought up beside the first.
		for i := 1; i < res.Report.Meta.Environments; i++ {
			name := harnessrun.EnvironmentName(topo.Name, i)
			if derr := ro.Provider.Down(context.WithoutCancel(ctx), name); derr != nil {
				runErr = errors.Join(runErr, fmt.Errorf("bench: bring down %q: %w", name, derr))
			}
		}
	}
	if res != nil {
		rep.Matrix = res.Summary.WallTime
		rep.Cases = res.Summary.Total
		n := res.Report.Meta.Environments
		var logs []string
		for i := range max(n, 1) {
			logs = append(logs, filepath.Join(harnessrun.EnvironmentArtifacts(ro.Artifacts, topo.Name, i, n), catalog.SuiteLog))
		}
		rep.Profile = profile(res.Report.Cases, logs, rep.Matrix, samples)
	}
	if ctx.Err() != nil {
		return nil, errors.Join(runErr, ctx.Err())
	}
	if runErr != nil && res == nil {
		return nil, fmt.Errorf("bench: matrix: %w", runErr)
	}

	log.Info("bench: timing invocations", "requests", o.Requests)
	rep.Tunnel, rep.TunnelErr = timeInvocations(ctx, env, topo, o.Requests)

	path := filepath.Join(ro.Artifacts, ReportFile)
	if werr := os.WriteFile(path, []byte(rep.Markdown()), 0o644); werr != nil {
		return rep, errors.Join(runErr, fmt.Errorf("bench: write report: %w", werr))
	}
	fmt.Fprintln(out)
	fmt.Fprint(out, rep.Markdown())
	fmt.Fprintf(out, "report: %s\n", path)
	return rep, runErr
}

// agents finds the agents of a run's environments for the CPU sampler:
// the first is known before the run, the others once they are up.
type agents struct {
	memory   func(env string) ([]local.ProcessMemory, error)
	topology string
	n        int // the run's environments
	mu       sync.Mutex
	pids     map[string]int
}

func newAgents(memory func(env string) ([]local.ProcessMemory, error), topology string, n int) *agents {
	return &agents{memory: memory, topology: topology, n: max(n, 1), pids: map[string]int{}}
}

// roots are this process (the runner and the suites) and every agent of
// the run's environments found so far (their control planes, kubelets and
// pods).
func (a *agents) roots() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	roots := []int{os.Getpid()}
	for i := range a.n {
		name := harnessrun.EnvironmentName(a.topology, i)
		if a.pids[name] == 0 && a.memory != nil && i > 0 {
			if procs, err := a.memory(name); err == nil {
				for _, p := range procs {
					if p.Component == "agent" {
						a.pids[name] = p.PID
					}
				}
			}
		}
		if pid := a.pids[name]; pid != 0 {
			roots = append(roots, pid)
		}
	}
	return roots
}
