package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nvcf/conformance/clusters/internal/guard"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
)

// ctrState is one container's status, guarded by the pod's mu.
type ctrState struct {
	spec     corev1.Container
	isInit   bool
	state    corev1.ContainerState
	last     corev1.ContainerState
	restarts int32
	ready    bool
	started  bool
	instance int     // number of the current process (log file name)
	launch   *launch // how the current process was started (kubectl exec reuses it)
}

func newCtrState(spec corev1.Container, isInit bool) *ctrState {
	return &ctrState{spec: spec, isInit: isInit,
		state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
}

// runContainer runs c until it ends for good (restart policy) or the pod
// stops, restarting it with back-off; it reports whether the last run
// exited 0.
func (r *podRuntime) runContainer(c *ctrState) bool {
	n := 0 // back-off index
	for {
		if r.ctx.Err() != nil {
			return false
		}
		started := time.Now()
		exit, err := r.runOnce(c)
		if err != nil {
			r.log.Warn("container did not start", "container", c.spec.Name, "err", err)
		}
		if r.ctx.Err() != nil {
			return exit == 0 && err == nil
		}
		if err != nil {
			// Never started (missing image, config or volume): retry, as
			// the kubelet does, whatever the restart policy.
			wait := backoff(min(n, 2), r.k.cfg.BackoffBase/5, r.k.cfg.BackoffMax)
			n++
			select {
			case <-r.ctx.Done():
				return false
			case <-time.After(wait):
			}
			continue
		}
		policy := r.restartPolicy
		if c.isInit && policy == corev1.RestartPolicyAlways {
			policy = corev1.RestartPolicyOnFailure
		}
		if policy == corev1.RestartPolicyNever || (policy == corev1.RestartPolicyOnFailure && exit == 0) {
			return exit == 0
		}
		if time.Since(started) >= r.k.cfg.BackoffReset {
			n = 0
		}
		wait := backoff(n, r.k.cfg.BackoffBase, r.k.cfg.BackoffMax)
		n++
		r.mu.Lock()
		c.last = c.state
		c.restarts++
		c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", wait, c.spec.Name, r.name)}}
		r.mu.Unlock()
		r.changed()
		select {
		case <-r.ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// runOnce starts one process for c and waits for it to exit (or to be
// stopped: pod deletion, failed liveness). err means it never started.
func (r *podRuntime) runOnce(c *ctrState) (exitCode int, err error) {
	r.mu.Lock()
	pc := *r.pc
	pc.pod = r.pod
	vols := r.volPaths
	netns := r.net.NetNS
	c.instance = int(c.restarts)
	logPath := filepath.Join(r.dir, "logs", c.spec.Name, fmt.Sprintf("%d.log", c.instance))
	r.mu.Unlock()

	scratch := filepath.Join(r.dir, "containers", c.spec.Name)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return -1, r.waiting(c, "CreateContainerError", err)
	}
	l, err := buildLaunch(r.ctx, &pc, &c.spec, r.k.cfg.Images, vols, scratch, r.k.obj)
	if err != nil {
		reason := "CreateContainerConfigError"
		if _, ierr := resolveImage(r.k.cfg.Images, c.spec.Image); ierr != nil {
			reason = "ErrImagePull"
		}
		return -1, r.waiting(c, reason, err)
	}
	msgPath, msgMount, err := terminationFile(&c.spec, scratch)
	if err != nil {
		return -1, r.waiting(c, "CreateContainerError", err)
	}
	if msgMount != nil {
		l.Mounts = append(l.Mounts, *msgMount)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return -1, r.waiting(c, "CreateContainerError", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return -1, r.waiting(c, "CreateContainerError", err)
	}
	defer logf.Close()
	cmd, err := r.k.command(netns, l)
	if err != nil {
		return -1, r.waiting(c, "CreateContainerError", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startPinned(cmd); err != nil {
		return -1, r.waiting(c, "RunContainerError", err)
	}
	exited := make(chan struct{})
	guard.Go("kubelet: container wait", func() { _ = cmd.Wait(); close(exited) })
	r.log.Info("container started", "container", c.spec.Name, "pid", cmd.Process.Pid, "restart", c.instance)

	r.mu.Lock()
	c.launch = l
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	c.started = c.spec.StartupProbe == nil
	c.ready = c.spec.ReadinessProbe == nil && c.started && !c.isInit
	podIP := r.net.IP
	r.mu.Unlock()
	r.changed()

	pctx, stopProbes := context.WithCancel(r.ctx)
	unhealthy := make(chan string, 1)
	guard.Go("kubelet: container probe", func() { r.probe(pctx, c, podIP, l, netns, unhealthy) })

	var why string
	select {
	case <-exited:
	case <-r.ctx.Done():
		r.terminate(cmd, exited)
	case why = <-unhealthy:
		r.log.Info("container failed its liveness or startup probe; restarting", "container", c.spec.Name, "why", why)
		r.terminate(cmd, exited)
	}
	stopProbes()
	st := cmd.ProcessState
	code, sig := exitStatus(st)
	term := &corev1.ContainerStateTerminated{ExitCode: int32(code), Signal: int32(sig), FinishedAt: metav1.Now(),
		ContainerID: containerID(r.uid, c)}
	r.mu.Lock()
	if c.state.Running != nil {
		term.StartedAt = c.state.Running.StartedAt
	}
	term.Reason = "Completed"
	if code != 0 {
		term.Reason = "Error"
	}
	if why != "" {
		term.Message = why
	} else {
		term.Message = terminationMessage(&c.spec, code, msgPath, logPath)
	}
	c.state = corev1.ContainerState{Terminated: term}
	c.ready = false
	r.mu.Unlock()
	r.changed()
	r.log.Info("container exited", "container", c.spec.Name, "exit", code, "signal", sig)
	return code, nil
}

// waiting records why c cannot start and returns err.
func (r *podRuntime) waiting(c *ctrState, reason string, err error) error {
	r.mu.Lock()
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}}
	r.mu.Unlock()
	r.changed()
	return err
}

// currentGrace is the pod's grace period and the channel closed when a
// later deletion shortens it.
func (r *podRuntime) currentGrace() (time.Duration, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.grace, r.graceCut
}

// terminate sends SIGTERM to the container's process group, then SIGKILL
// once the grace period, counted from the SIGTERM, has passed (a shorter
// one set meanwhile counts), and waits for the exit.
func (r *podRuntime) terminate(cmd *exec.Cmd, exited <-chan struct{}) {
	pid := cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	sent := time.Now()
	var grace time.Duration
	for over := false; !over; {
		var cut <-chan struct{}
		grace, cut = r.currentGrace()
		t := time.NewTimer(max(0, grace-time.Since(sent)))
		select {
		case <-exited:
			t.Stop()
			return
		case <-cut:
		case <-t.C:
			over = true
		}
		t.Stop()
	}
	r.log.Info("grace period over; killing", "pid", pid, "grace", grace)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-exited
}

// exitStatus turns a process state into the container's exit code (128+n
// for signal n, as a shell reports it) and the signal.
func exitStatus(st *os.ProcessState) (code, sig int) {
	if st == nil {
		return -1, 0
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return st.ExitCode(), 0
}

func containerID(uid types.UID, c *ctrState) string {
	return fmt.Sprintf("nvcf://%s/%s/%d", uid, c.spec.Name, c.instance)
}

// command builds `ip netns exec <netns> /bin/sh -c <shellWrapper> …` in a new
// UTS namespace and process group; the process dies with the agent.
func (k *provider) command(netns string, l *launch) (*exec.Cmd, error) {
	if netns == "" {
		return nil, errors.New("pod has no network namespace")
	}
	args := append([]string{"netns", "exec", netns}, shellArgs(l)...)
	cmd := exec.Command("ip", args...)
	cmd.Env = l.Env
	if env, ok := os.LookupEnv(proc.MarkerEnv); ok {
		// The environment's marker, so that `up` and `down` find a pod
		// process a killed agent left (/proc/<pid>/environ).
		cmd.Env = append(slices.Clip(cmd.Env), proc.MarkerVar(env))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
		Unshareflags: syscall.CLONE_NEWUTS,
	}
	return cmd, nil
}
