package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters/local/internal/agent"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// Leftovers are found without any state file: every process the provider
// starts (the agent, control planes, CoreDNS, pod processes) carries
// proc.MarkerEnv=<state folder> in its environment, and /proc says which
// processes do.

// marked lists the processes carrying the marker of an environment whose
// state folder is under root (root "": any environment on the machine).
func marked(root string) ([]proc.Marked, error) {
	all, err := proc.Scan()
	if err != nil {
		return nil, err
	}
	if root == "" {
		return all, nil
	}
	root = filepath.Clean(root)
	return slices.DeleteFunc(all, func(m proc.Marked) bool { return filepath.Dir(filepath.Clean(m.Env)) != root }), nil
}

// isAgent reports whether m is an environment's agent: the launcher ends its
// command line with "--state <dir>".
func isAgent(m proc.Marked) bool {
	n := len(m.Argv)
	return n >= 2 && m.Argv[n-2] == "--state" && m.Argv[n-1] == m.Env
}

// markedNames are the names of the environments under root that have a
// marked process.
func markedNames(root string) []string {
	ms, _ := marked(root)
	var names []string
	for _, m := range ms {
		if n := filepath.Base(m.Env); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// killMarked stops every process that carries env's marker: a live agent
// first, with SIGTERM and up to agentGrace to tear down in order (its
// children die with it), then whatever is left, with SIGKILL (leftovers
// have no agent to wait for them, and their state is removed next). It
// returns how many processes it signalled.
func killMarked(ctx context.Context, env string, agentGrace time.Duration, log *slog.Logger) (int, error) {
	ms, err := marked("")
	if err != nil {
		return 0, err
	}
	ms = slices.DeleteFunc(ms, func(m proc.Marked) bool { return m.Env != env })
	n := 0
	var errs []error
	for _, m := range ms {
		if isAgent(m) {
			killed, err := proc.KillMarked(ctx, m.PID, env, agentGrace)
			if killed {
				n++
				log.Info("stopped a running agent found by its marker", "pid", m.PID, "env", env)
			}
			errs = append(errs, err)
		}
	}
	errs = append(errs, killAll(ctx, ms, func(m proc.Marked) bool { return !isAgent(m) }, &n, log))
	return n, errors.Join(errs...)
}

// killAll SIGKILLs, in parallel, the processes of ms that keep says.
func killAll(ctx context.Context, ms []proc.Marked, keep func(proc.Marked) bool, n *int, log *slog.Logger) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, m := range ms {
		if !keep(m) {
			continue
		}
		wg.Go(func() {
			killed, err := proc.KillMarked(ctx, m.PID, m.Env, 0)
			mu.Lock()
			defer mu.Unlock()
			if killed {
				*n++
				log.Info("killed a leftover process found by its marker", "pid", m.PID, "argv0", first(m.Argv), "env", m.Env)
			}
			errs = append(errs, err)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// stopUnrecorded ends environment name when it has no state.json (its
// agent was killed before writing it, or a clean-up was interrupted after
// removing it): every marked process of it is stopped, and when agent.json
// is still there its clusters' pod network is removed too.
func (p *provider) stopUnrecorded(ctx context.Context, name string, log *slog.Logger) error {
	dir := p.dir(name)
	n, err := killMarked(ctx, dir, p.o.StopTimeout, log)
	errs := []error{err}
	cfg, cerr := agent.ReadConfig(dir)
	if cerr == nil {
		errs = append(errs, agent.CleanupEnvironment(ctx, dir, cfg, log))
	}
	if n > 0 || cerr == nil {
		errs = append(errs, state.RemoveExceptLogs(dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop environment %q (no state recorded): %w", name, err)
	}
	return nil
}

// clearUnrecorded runs stopUnrecorded for every environment under the state
// root that has marked processes but no state.json; Up calls it once the
// recorded environments are dealt with, so nothing of ours holds a port it
// is about to bind.
func (p *provider) clearUnrecorded(ctx context.Context, progress io.Writer, log *slog.Logger) error {
	var errs []error
	for _, name := range markedNames(p.o.StateRoot) {
		if _, err := os.Stat(state.File(p.dir(name))); err == nil {
			continue
		}
		fmt.Fprintf(progress, "cleaning up processes of environment %q left without state…\n", name)
		errs = append(errs, p.stopUnrecorded(ctx, name, log))
	}
	return errors.Join(errs...)
}

// purgeProcesses kills every process on the machine that carries the
// harness's marker, of whichever environment (`harness down --purge`).
func purgeProcesses(ctx context.Context, log *slog.Logger) (int, error) {
	ms, err := marked("")
	if err != nil {
		return 0, err
	}
	n := 0
	return n, killAll(ctx, ms, func(m proc.Marked) bool { return true }, &n, log)
}
