package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/controlplane"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// cluster is one running cluster: its pod network, control plane, and the
// goroutines of its nodes and load-balancer controller.
type cluster struct {
	plan  plan.Cluster
	nodes int
	net   *podnet.Cluster
	cp    *controlplane.Cluster

	cancel context.CancelFunc // stops nodes and the LB controller
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error // from node and LB goroutines that ended early
}

func (c *cluster) info() state.Cluster {
	s := state.Cluster{Name: c.plan.Name, Index: c.plan.Index, APIServer: c.cp.Access.Server}
	for n := range c.nodes {
		s.Nodes = append(s.Nodes, c.plan.NodeName(n))
	}
	return s
}

// startCluster brings up cluster i: bridge, control plane, CoreDNS, nodes,
// LB controller; it returns once every node is Ready.
func (a *agent) startCluster(ctx context.Context, i int, name string, nodes int) error {
	start := time.Now()
	c := &cluster{plan: a.cfg.Place.Cluster(i, name), nodes: nodes}
	a.mu.Lock()
	a.clusters[i] = c
	a.mu.Unlock()
	dir := filepath.Join(a.dir, name)
	var err error
	if c.net, err = podnet.SetupCluster(ctx, podnet.ClusterConfig{Index: c.plan.Index, Name: name, StateDir: dir, Log: a.log}); err != nil {
		return err
	}
	if c.cp, err = controlplane.Start(ctx, a.controlplaneConfig(c.plan, nodes)); err != nil {
		return err
	}
	a.notify.progress("%s: API server ready on %s (%s)", name, c.cp.Access.Server, time.Since(start).Round(100*time.Millisecond))
	if err := c.cp.StartCoreDNS(); err != nil {
		return err
	}
	var ps []state.Process
	for _, p := range c.cp.Processes() {
		ps = append(ps, state.Process{Name: p.Name, PID: p.PID(), Marker: p.Marker})
		a.goGuard("supervisor of "+p.Name, func() { a.supervise(c.cp, p) })
	}
	if err := a.record(ps...); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	for n := range nodes {
		node := fmt.Sprintf("node %s", c.plan.NodeName(n))
		c.goRun(node, func() error {
			return a.guard("cluster "+name+": "+node, func() error { return a.runNode(runCtx, c, n) })
		})
	}
	c.goRun("load-balancer controller", func() error {
		return a.guard("cluster "+name+": load-balancer controller", func() error { return a.runLB(runCtx, c) })
	})
	if err := waitClusterReady(ctx, c, 2*time.Minute); err != nil {
		return err
	}
	a.notify.progress("%s: %d node(s) ready (%s)", name, nodes, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// goRun runs fn until the cluster stops; an error it returns is kept for
// early() and logged.
func (c *cluster) goRun(what string, fn func() error) {
	c.wg.Go(func() {
		if err := fn(); err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, fmt.Errorf("%s: %w", what, err))
			c.mu.Unlock()
		}
	})
}

// early returns the errors of goroutines that have ended.
func (c *cluster) early() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

// stop ends the nodes (which stop their pods) and the LB controller, then
// the control plane, then removes the bridge and the pods' namespaces.
func (c *cluster) stop(ctx context.Context) error {
	var errs []error
	if c.cancel != nil {
		c.cancel()
		done := make(chan struct{})
		go func() { c.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("cluster %s: nodes did not stop in time", c.plan.Name))
		}
	}
	if c.cp != nil {
		errs = append(errs, c.cp.Stop())
	}
	if c.net != nil {
		errs = append(errs, c.net.Close(ctx))
	}
	return errors.Join(errs...)
}

// Back-off between restarts of a control-plane process: it doubles from
// restartFirst up to restartMax, and starts over once a process has run
// for restartReset.
const (
	restartFirst = time.Second
	restartMax   = 30 * time.Second
	restartReset = time.Minute
)

// supervise restarts a control-plane process (etcd, API server, controller
// manager, scheduler, CoreDNS) that exits while the agent is not stopping,
// and records the new pid; every exit is logged with the process's log.
func (a *agent) supervise(cp *controlplane.Cluster, p *proc.Process) {
	wait, since := restartFirst, time.Now()
	for {
		<-p.Done()
		if a.stopping.Load() {
			return
		}
		if time.Since(since) > restartReset {
			wait = restartFirst
		}
		a.log.Error("a control-plane process exited; restarting it", "process", p.Name, "pid", p.PID(), "err", p.Err(), "log", p.Log, "in", wait)
		time.Sleep(wait)
		wait = min(2*wait, restartMax)
		if a.stopping.Load() {
			return
		}
		np, err := cp.Restart(p)
		if err != nil {
			if a.stopping.Load() {
				return
			}
			a.log.Error("could not restart a control-plane process; the cluster is broken until it is recreated (harness up --recreate)", "process", p.Name, "err", err)
			return
		}
		if err := a.replaceProcess(p.PID(), np); err != nil {
			a.log.Warn("record the restarted process", "process", np.Name, "err", err)
		}
		a.log.Info("control-plane process restarted", "process", np.Name, "pid", np.PID())
		p, since = np, time.Now()
	}
}
