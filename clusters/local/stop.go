package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// agentAlive reports whether the recorded agent still runs (its command
// line carries the state folder).
func agentAlive(st *state.State) bool {
	return st.AgentPID > 0 && proc.Ours(st.AgentPID, st.Marker)
}

// stop ends environment name: SIGTERM to a live agent (which tears down in
// order) and a wait for it; then, whether it was alive or not, every
// recorded process that is still ours is killed, the environment's pod
// network (its namespaces, bridges, lo addresses; the nft table with the
// last bridge) is removed and the state folder is deleted except its logs.
// Processes the state does not record (started after its last save) are
// found by their marker (proc.MarkerEnv) and killed too.
func (p *provider) stop(ctx context.Context, name string, st *state.State, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	if st.AgentPID > 0 {
		killed, err := proc.Kill(ctx, st.AgentPID, st.Marker, p.o.StopTimeout)
		if killed {
			log.Info("agent stopped", "pid", st.AgentPID)
		}
		errs = append(errs, err)
	}
	// Reverse start order: the API server goes before etcd, or it waits
	// long on shutdown.
	for i := len(st.Processes) - 1; i >= 0; i-- {
		ps := st.Processes[i]
		killed, err := proc.Kill(ctx, ps.PID, ps.Marker, 10*time.Second)
		if killed {
			log.Info("killed a process the agent left", "process", ps.Name, "pid", ps.PID)
		}
		errs = append(errs, err)
	}
	_, err := killMarked(ctx, p.dir(name), p.o.StopTimeout, log)
	errs = append(errs, err)
	errs = append(errs, agent.CleanupEnvironment(ctx, p.dir(name), configOf(p.dir(name), st), log), state.RemoveExceptLogs(p.dir(name)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop environment %q (agent pid %s): %w", name, strconv.Itoa(st.AgentPID), err)
	}
	return nil
}

// configOf is the agent configuration of the environment in dir, or, when
// agent.json is gone, what its state says: the spec and where its clusters
// sit in the address plan.
func configOf(dir string, st *state.State) agent.Config {
	if cfg, err := agent.ReadConfig(dir); err == nil {
		return cfg
	}
	cfg := agent.Config{Spec: st.Spec}
	for _, c := range st.Clusters {
		if i := slices.IndexFunc(st.Spec.Clusters, func(s clusters.ClusterSpec) bool { return s.Name == c.Name }); i >= 0 {
			cfg.Place.Base = c.Index - i
			break
		}
	}
	return cfg
}
