// Package local is the embedded provider: real control planes from pinned
// upstream releases (downloaded and checksum-verified, or built), pods as processes in network namespaces, load balancers
// and external DNS served by an agent process. See docs/provider-local.md.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// Options configure the provider.
type Options struct {
	// StateRoot holds one folder per environment (default clusters.StateHome()).
	StateRoot string
	// CacheDir is the binary cache (default clusters.CacheHome()).
	CacheDir string
	// BinarySources are the release base URLs the control-plane binaries
	// are downloaded from (empty fields: the NVCF_BINARIES_*_URL
	// environment variables, else upstream); see docs/provider-local.md.
	BinarySources BinarySources
	// AgentCommand is the argv that runs the agent; the provider appends
	// "--state <dir>". Default: this executable with "agent".
	AgentCommand []string
	// Images maps image references or repositories to local binaries, for
	// the process kubelets (e.g. "nvcf-ref" → the built nvcf-ref).
	Images map[string]string
	// ReadyTimeout bounds the agent's bring-up (default 5 min).
	ReadyTimeout time.Duration
	// StopTimeout bounds the agent's teardown on Down (default 2 min).
	StopTimeout time.Duration
}

// provider is the embedded provider.
type provider struct{ o Options }

// New returns the embedded provider.
func New(o Options) clusters.Provider { return &provider{o: o.withDefaults()} }

var _ clusters.Prober = (*provider)(nil)

// Names lists the environments that have state under o.StateRoot, running
// or left by a stopped agent, and those without state that still have a
// process carrying their marker.
func Names(o Options) ([]string, error) {
	o = o.withDefaults()
	names, err := state.Names(o.StateRoot)
	if err != nil {
		return nil, err
	}
	for _, n := range markedNames(o.StateRoot) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

func (o Options) withDefaults() Options {
	if o.StateRoot == "" {
		o.StateRoot = clusters.StateHome()
	}
	if o.CacheDir == "" {
		o.CacheDir = clusters.CacheHome()
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 5 * time.Minute
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 2 * time.Minute
	}
	return o
}

func (p *provider) dir(name string) string { return filepath.Join(p.o.StateRoot, name) }

// ErrChanged is wrapped when Up finds a running environment whose spec differs.
var ErrChanged = errors.New("the running environment differs from the one asked for")

// ErrOtherRunning is wrapped when another environment runs and Up was not
// asked to start beside it (clusters.WithBeside), or the address plan has
// no room left beside the running ones.
var ErrOtherRunning = errors.New("another environment is running")

// Up implements clusters.Provider.
func (p *provider) Up(ctx context.Context, spec clusters.Spec, opts ...clusters.UpOption) (*clusters.Environment, error) {
	o := clusters.ApplyUpOptions(opts...)
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(spec.Clusters) > podnet.EnvironmentClusters {
		return nil, fmt.Errorf("%w: %d clusters, the address plan has room for %d", clusters.ErrInvalidSpec, len(spec.Clusters), podnet.EnvironmentClusters)
	}
	if err := podnet.RequireRoot(); err != nil {
		return nil, err
	}
	unlock, err := state.Lock(ctx, p.o.StateRoot, o.Progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if env, done, err := p.reuseOrClear(ctx, spec, o); done || err != nil {
		return env, err
	}
	if err := p.clearUnrecorded(ctx, o.Progress, o.Logger); err != nil {
		return nil, err
	}
	place, err := p.freePlace(spec)
	if err != nil {
		return nil, err
	}
	bin, err := binaries.Ensure(ctx, binaries.Options{CacheDir: p.o.CacheDir, Sources: p.o.BinarySources, Progress: o.Progress, Log: o.Logger})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(o.Progress, "starting %d cluster(s) of %q…\n", len(spec.Clusters), spec.Name)
	if place.Base > 0 {
		fmt.Fprintf(o.Progress, "beside the running environments: clusters from index %d of the address plan, external DNS on %s\n", place.Base, place.ExternalDNS())
	}
	if err := p.launch(ctx, spec, place, *bin, o); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "environment %q ready in %s\n", spec.Name, time.Since(start).Round(100*time.Millisecond))
	return p.Status(ctx, spec.Name)
}

// reuseOrClear handles what runs already: the same spec is reused (done),
// a changed one refused or (with Recreate) stopped, leftovers of killed
// agents cleaned, another live environment refused.
func (p *provider) reuseOrClear(ctx context.Context, spec clusters.Spec, o clusters.UpOptions) (*clusters.Environment, bool, error) {
	names, err := state.Names(p.o.StateRoot)
	if err != nil {
		return nil, false, err
	}
	for _, name := range names {
		st, err := state.Load(p.dir(name))
		if err != nil {
			return nil, false, err
		}
		alive := agentAlive(st)
		switch {
		case alive && st.Stopping:
			// A `down` (or a run's end) is tearing it down: wait for that,
			// never reuse clusters that are going.
			fmt.Fprintf(o.Progress, "waiting for environment %q to finish stopping (agent pid %d)…\n", name, st.AgentPID)
			if err := p.stop(ctx, name, st, o.Logger); err != nil {
				return nil, false, err
			}
		case !alive || !st.Ready:
			fmt.Fprintf(o.Progress, "cleaning up environment %q left by a stopped or failed agent (pid %d)…\n", name, st.AgentPID)
			if err := p.stop(ctx, name, st, o.Logger); err != nil {
				return nil, false, err
			}
		case name == spec.Name && st.SpecHash == spec.Hash() && p.imagesDiff(name) == "":
			fmt.Fprintf(o.Progress, "reusing environment %q (agent pid %d)\n", name, st.AgentPID)
			env, err := p.Status(ctx, name)
			return env, true, err
		case !o.Recreate && name == spec.Name && st.SpecHash == spec.Hash():
			// The same clusters, but their pods run other binaries (another
			// checkout's build, say): reusing them would test the wrong code.
			return nil, false, fmt.Errorf("%w: %q runs other component binaries (%s); replace it with `harness up --recreate --topology FILE`, or run `harness down` first",
				ErrChanged, name, p.imagesDiff(name))
		case !o.Recreate && name == spec.Name:
			return nil, false, fmt.Errorf("%w: %q runs with a different topology (%s); replace it with `harness up --recreate --topology FILE`, or run `harness down` first",
				ErrChanged, name, strings.Join(st.Spec.Diff(spec), "; "))
		case o.Beside && name != spec.Name:
			// Up places the new environment on indexes this one leaves free.
		case !o.Recreate:
			return nil, false, fmt.Errorf("%w: %q (agent pid %d) holds the bridges and ports; run `harness down --name %s` first, or replace it with `harness up --recreate --topology FILE`",
				ErrOtherRunning, name, st.AgentPID, name)
		default:
			fmt.Fprintf(o.Progress, "recreating: stopping environment %q…\n", name)
			if err := p.stop(ctx, name, st, o.Logger); err != nil {
				return nil, false, err
			}
		}
	}
	return nil, false, nil
}

// imagesDiff says how the image-to-binary map the environment name runs
// with differs from this provider's ("" when it does not).
func (p *provider) imagesDiff(name string) string {
	cfg, err := agent.ReadConfig(p.dir(name))
	if err != nil {
		return err.Error()
	}
	all := maps.Clone(cfg.Images)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, p.o.Images)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if cfg.Images[k] != p.o.Images[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s, not %s", k, orNone(cfg.Images[k]), orNone(p.o.Images[k])))
		}
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Down implements clusters.Provider.
func (p *provider) Down(ctx context.Context, name string) (err error) {
	unlock, err := state.Lock(ctx, p.o.StateRoot, nil)
	if err != nil {
		return err
	}
	defer unlock()
	// An agent that stopped itself after a panic left it beside its log:
	// the down that follows (a run's own, or the user's) reports it once.
	defer func() {
		if line, ok := agent.ReadPanic(p.dir(name)); ok {
			err = errors.Join(err, fmt.Errorf("%w: environment %q had stopped: %s; agent log: %s",
				ErrAgent, name, line, filepath.Join(agent.LogDir(p.dir(name)), "agent.log")))
			agent.ClearPanic(p.dir(name))
		}
	}()
	st, err := state.Load(p.dir(name))
	if errors.Is(err, state.ErrNoState) {
		if !slices.Contains(markedNames(p.o.StateRoot), name) {
			if _, err := os.Stat(agent.ConfigFile(p.dir(name))); err != nil {
				return nil // nothing of it runs or is recorded
			}
		}
		if err := podnet.RequireRoot(); err != nil {
			return err
		}
		return p.stopUnrecorded(ctx, name, slog.New(slog.DiscardHandler))
	}
	if err != nil {
		return err
	}
	if err := podnet.RequireRoot(); err != nil {
		return err
	}
	return p.stop(ctx, name, st, nil)
}

// Status implements clusters.Provider.
func (p *provider) Status(ctx context.Context, name string) (*clusters.Environment, error) {
	st, err := p.running(name)
	if err != nil {
		return nil, err
	}
	return environment(ctx, st)
}

// Probe implements clusters.Prober: the state and the agent's process,
// no API request.
func (p *provider) Probe(_ context.Context, name string) error {
	_, err := p.running(name)
	return err
}

// running loads the state of environment name, or returns an error
// wrapping clusters.ErrNotFound when it has none or its agent is gone.
func (p *provider) running(name string) (*state.State, error) {
	st, err := state.Load(p.dir(name))
	if errors.Is(err, state.ErrNoState) {
		if line, ok := agent.ReadPanic(p.dir(name)); ok {
			return nil, fmt.Errorf("%w: %q stopped after its agent panicked: %s; agent log: %s; run `harness up`",
				clusters.ErrNotFound, name, line, filepath.Join(agent.LogDir(p.dir(name)), "agent.log"))
		}
		return nil, fmt.Errorf("%w: %q (no state in %s); run `harness up`", clusters.ErrNotFound, name, p.dir(name))
	}
	if err != nil {
		return nil, err
	}
	if !agentAlive(st) {
		return nil, fmt.Errorf("%w: %q: its agent (pid %d) is gone; the next `harness up` or `harness down` cleans up; logs in %s",
			clusters.ErrNotFound, name, st.AgentPID, agent.LogDir(p.dir(name)))
	}
	if st.Stopping {
		return nil, fmt.Errorf("%w: %q is being torn down (agent pid %d); the next `harness up` waits for it and starts afresh",
			clusters.ErrNotFound, name, st.AgentPID)
	}
	return st, nil
}

// freePlace is the first place in the address plan where spec's clusters
// overlap no running environment's.
func (p *provider) freePlace(spec clusters.Spec) (plan.Env, error) {
	names, err := state.Names(p.o.StateRoot)
	if err != nil {
		return plan.Env{}, err
	}
	used := make([]bool, podnet.EnvironmentClusters)
	for _, name := range names {
		st, err := state.Load(p.dir(name))
		if err != nil {
			return plan.Env{}, err
		}
		cfg := configOf(p.dir(name), st)
		for i := range cfg.Spec.Clusters {
			if j := cfg.Place.Base + i; j < len(used) {
				used[j] = true
			}
		}
	}
	n := len(spec.Clusters)
	for base := 0; base+n <= podnet.EnvironmentClusters; base++ {
		if !slices.Contains(used[base:base+n], true) {
			return plan.Env{Base: base}, nil
		}
	}
	return plan.Env{}, fmt.Errorf("%w: no room for %d more clusters beside %s in the address plan (%d clusters); run `harness down` for some of them",
		ErrOtherRunning, n, strings.Join(names, ", "), podnet.EnvironmentClusters)
}
