package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvcf/conformance/clusters/internal/extdns"
	"github.com/nvcf/conformance/clusters/internal/guard"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/controlplane"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// agent is one running environment.
type agent struct {
	dir    string
	cfg    Config
	log    *slog.Logger
	notify *notifier
	dns    *extdns.Server
	hooks  Hooks
	// failure is the first panic of a goroutine; it stops the run.
	failure failure
	// stopping is set once teardown begins (process exits are expected then).
	stopping atomic.Bool

	mu       sync.Mutex
	st       *state.State
	clusters []*cluster // index = spec position; nil until started
}

// Run is the agent's main: it brings up the environment in dir, serves
// until ctx is done (SIGTERM), then tears it down. Logs go to log. A panic
// in any goroutine of the agent stops the environment the same way: it is
// logged with its stack, sent to the launcher while bring-up runs, and
// returned.
func Run(ctx context.Context, dir string, hooks Hooks, log *slog.Logger) (err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if hooks.Node == nil || hooks.LB == nil {
		return errors.New("agent: Hooks.Node and Hooks.LB are required")
	}
	a := &agent{dir: dir, log: log, notify: openNotifier(), hooks: hooks}
	defer a.notify.close()
	guard.SetHandler(a.onPanic)
	defer guard.SetHandler(nil)
	defer func() {
		if r := recover(); r != nil {
			perr := recovered("the agent's main goroutine", r)
			log.Error("panic; stopping the environment", "err", perr)
			a.notify.send(MsgError, firstLine(perr))
			err = errors.Join(perr, a.teardown())
		}
	}()
	cfg, err := ReadConfig(dir)
	if err != nil {
		a.notify.send(MsgError, err.Error())
		return err
	}
	a.cfg = cfg
	a.clusters = make([]*cluster, len(cfg.Spec.Clusters))
	a.st = &state.State{Spec: cfg.Spec, SpecHash: cfg.Spec.Hash(), AgentPID: os.Getpid(), Marker: dir,
		Kubeconfig: filepath.Join(dir, "kubeconfig"), DNS: cfg.Place.ExternalDNS().String(), StartedAt: time.Now().UTC()}
	if err := a.save(); err != nil {
		a.notify.send(MsgError, err.Error())
		return err
	}
	// Bring-up runs under its own context so that SIGTERM during it still
	// ends in an orderly teardown.
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	a.failure.mu.Lock()
	a.failure.stop = stopRun
	a.failure.mu.Unlock()
	go func() { <-ctx.Done(); stopRun() }()

	start := time.Now()
	if err := a.up(runCtx); err != nil {
		if perr := a.failure.get(); perr != nil {
			err = perr // the cause; the rest is its consequence
		}
		a.notify.send(MsgError, firstLine(err))
		log.Error("bring-up failed", "err", err)
		return errors.Join(err, a.teardown())
	}
	a.mu.Lock()
	a.st.Ready, a.st.ReadyAt = true, time.Now().UTC()
	a.mu.Unlock()
	if err := a.save(); err != nil {
		a.notify.send(MsgError, err.Error())
		return errors.Join(err, a.teardown())
	}
	log.Info("environment ready", "took", time.Since(start).Round(time.Millisecond))
	a.notify.send(MsgReady, "")
	a.notify.close()
	<-runCtx.Done()
	if perr := a.failure.get(); perr != nil {
		log.Error("stopping after a panic", "err", perr)
		a.notePanic(perr)
		return errors.Join(perr, a.teardown())
	}
	log.Info("stopping")
	return a.teardown()
}

// recordStopping records, before a teardown, that the environment is
// going, so that an `up` arriving meanwhile waits for it instead of reusing
// clusters that are being torn down.
func (a *agent) recordStopping() {
	a.mu.Lock()
	a.st.Stopping = true
	a.mu.Unlock()
	if err := a.save(); err != nil {
		a.log.Warn("record that the environment is stopping", "err", err)
	}
}

// firstLine is err's message without a panic's stack (which stays in the
// agent's log), for the launcher's one-line error.
func firstLine(err error) string {
	msg := err.Error()
	if errors.Is(err, ErrPanic) {
		msg, _, _ = strings.Cut(msg, "\ngoroutine ")
		msg += " (stack in the agent log)"
	}
	return msg
}

// up starts the external DNS, then every cluster in parallel.
func (a *agent) up(ctx context.Context) error {
	if err := podnet.RequireRoot(); err != nil {
		return err
	}
	a.dns = extdns.New(a.log.With("component", "extdns"), a.cfg.Spec.Domain)
	if err := a.dns.Start(ctx, a.cfg.Place.ExternalDNS()); err != nil {
		return fmt.Errorf("external DNS on %s: %w", a.cfg.Place.ExternalDNS(), err)
	}
	errs := make([]error, len(a.cfg.Spec.Clusters))
	var wg sync.WaitGroup
	for i, cs := range a.cfg.Spec.Clusters {
		wg.Go(func() {
			errs[i] = a.guard("bring-up of cluster "+cs.Name, func() error { return a.startCluster(ctx, i, cs.Name, cs.Nodes) })
			if errs[i] != nil {
				errs[i] = fmt.Errorf("cluster %s: %w", cs.Name, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return a.writeKubeconfig()
}

// writeKubeconfig writes the environment's kubeconfig, one context per
// cluster (context = cluster name), and records the clusters in the state.
func (a *agent) writeKubeconfig() error {
	var access []controlplane.Access
	a.mu.Lock()
	a.st.Clusters = nil
	for _, c := range a.clusters {
		access = append(access, c.cp.Access)
		a.st.Clusters = append(a.st.Clusters, c.info())
	}
	a.mu.Unlock()
	return controlplane.WriteKubeconfig(a.st.Kubeconfig, access...)
}

func (a *agent) save() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st.Save(a.dir)
}

// record adds processes to the state and saves it.
func (a *agent) record(ps ...state.Process) error {
	a.mu.Lock()
	a.st.Processes = append(a.st.Processes, ps...)
	a.mu.Unlock()
	return a.save()
}

// replaceProcess records np in place of the process whose pid was old.
func (a *agent) replaceProcess(old int, np *proc.Process) error {
	a.mu.Lock()
	for i, ps := range a.st.Processes {
		if ps.PID == old && ps.Name == np.Name {
			a.st.Processes[i].PID = np.PID()
		}
	}
	a.mu.Unlock()
	return a.save()
}

// teardown stops everything in order and removes the state folder but its
// logs: nodes and load balancers first (their pods get their grace
// period), then each control plane (API server before etcd), the bridges,
// the external DNS, and whatever else of this environment is left.
func (a *agent) teardown() error {
	a.stopping.Store(true)
	a.recordStopping()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs := make([]error, len(a.clusters), len(a.clusters)+3)
	var wg sync.WaitGroup
	for i, c := range a.clusters {
		if c != nil {
			wg.Go(func() {
				errs[i] = a.guard("teardown of cluster "+c.plan.Name, func() error { return c.stop(ctx) })
			})
		}
	}
	wg.Wait()
	if a.dns != nil {
		errs = append(errs, a.dns.Close())
	}
	errs = append(errs, CleanupEnvironment(ctx, a.dir, a.cfg, a.log))
	errs = append(errs, state.RemoveExceptLogs(a.dir))
	err := errors.Join(errs...)
	if err != nil {
		a.log.Error("teardown", "err", err)
	} else {
		a.log.Info("stopped; state removed", "logs", LogDir(a.dir))
	}
	return err
}

// controlplaneConfig is the control-plane configuration of cluster p.
func (a *agent) controlplaneConfig(p plan.Cluster, nodes int) controlplane.Config {
	name := p.Name
	return controlplane.Config{
		Plan: p, Nodes: nodes, Dir: filepath.Join(a.dir, name), LogDir: LogDir(a.dir),
		Bin: a.cfg.Bin, Domain: a.cfg.Spec.Domain, Log: a.log.With("cluster", name),
	}
}
