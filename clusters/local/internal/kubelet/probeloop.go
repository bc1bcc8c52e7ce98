package kubelet

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// probe runs c's startup, then readiness and liveness probes until ctx
// ends. Readiness updates c.ready; a failed startup or liveness verdict is
// sent on unhealthy (once) so that runOnce restarts the container.
func (r *podRuntime) probe(ctx context.Context, c *ctrState, podIP netip.Addr, l *launch, netns string, unhealthy chan<- string) {
	execFn := func(ctx context.Context, command []string) error { return r.k.execIn(ctx, netns, l, command) }
	spec := &c.spec
	if p := spec.StartupProbe; p != nil {
		if !r.probeUntil(ctx, p, podIP, spec, execFn, true) {
			if ctx.Err() == nil {
				unhealthy <- "startup probe failed"
			}
			return
		}
		r.mu.Lock()
		c.started = true
		c.ready = spec.ReadinessProbe == nil && !c.isInit
		r.mu.Unlock()
		r.changed()
	}
	if p := spec.ReadinessProbe; p != nil && !c.isInit {
		onReady := func(ok bool) {
			r.mu.Lock()
			changed := c.ready != ok && c.state.Running != nil
			if changed {
				c.ready = ok
			}
			r.mu.Unlock()
			if changed {
				r.log.Info("readiness changed", "container", spec.Name, "ready", ok)
				r.changed()
			}
		}
		guard.Go("kubelet: readiness probe", func() { r.probeLoop(ctx, p, podIP, spec, execFn, false, onReady) })
	}
	if p := spec.LivenessProbe; p != nil {
		onLive := func(ok bool) {
			if !ok {
				select {
				case unhealthy <- "liveness probe failed":
				default:
				}
			}
		}
		guard.Go("kubelet: liveness probe", func() { r.probeLoop(ctx, p, podIP, spec, execFn, true, onLive) })
	}
}

// probeUntil runs p until its verdict is success (true) or failure (false).
func (r *podRuntime) probeUntil(ctx context.Context, p *corev1.Probe, podIP netip.Addr, c *corev1.Container, execFn execProbe, _ bool) bool {
	period, initial := probeTiming(p)
	st := newProbeState(p, false)
	st.success = 1
	if !sleepCtx(ctx, initial) {
		return false
	}
	for {
		err := runProbe(ctx, p, podIP, c, execFn)
		if ctx.Err() != nil {
			return false
		}
		if st.observe(err == nil) {
			return true
		}
		if st.failRun >= st.failure {
			return false
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

// probeLoop runs p every period and calls report with each verdict.
func (r *podRuntime) probeLoop(ctx context.Context, p *corev1.Probe, podIP netip.Addr, c *corev1.Container, execFn execProbe, initial bool, report func(bool)) {
	period, delay := probeTiming(p)
	st := newProbeState(p, initial)
	if !sleepCtx(ctx, delay) {
		return
	}
	for {
		err := runProbe(ctx, p, podIP, c, execFn)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.log.Debug("probe failed", "container", c.Name, "err", err)
		}
		report(st.observe(err == nil))
		if !sleepCtx(ctx, st.next(period)) {
			return
		}
	}
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// execIn runs command in the container's namespaces with its mounts and
// environment (exec probes).
func (k *provider) execIn(ctx context.Context, netns string, l *launch, command []string) error {
	if len(command) == 0 {
		return fmt.Errorf("exec probe with an empty command")
	}
	x := *l
	x.Argv = command
	cmd, err := k.command(netns, &x)
	if err != nil {
		return err
	}
	cmd.SysProcAttr.Pdeathsig = 0
	out, err := runCtx(ctx, cmd)
	if err != nil {
		return fmt.Errorf("exec probe %v: %w: %s", command, err, out)
	}
	return nil
}

// runCtx runs cmd, killing its process group when ctx ends.
func runCtx(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	guard.Go("kubelet: probe command wait", func() { done <- cmd.Wait() })
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return out.String(), ctx.Err()
	}
}
