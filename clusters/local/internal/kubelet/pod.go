package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nvcf/conformance/clusters/internal/guard"
	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// podRuntime runs one pod: its network, volumes and containers, and keeps
// its status. Fields under mu change while it runs.
type podRuntime struct {
	k   *provider
	log *slog.Logger
	dir string // the pod folder
	// uid, name and restartPolicy never change for a pod.
	uid           types.UID
	name          string
	restartPolicy corev1.RestartPolicy

	ctx    context.Context // cancelled when the pod must stop
	cancel context.CancelFunc
	done   chan struct{} // closed once everything is stopped and removed
	dirty  chan struct{} // a status change to report (capacity 1)

	mu        sync.Mutex
	pod       *corev1.Pod
	pc        *podContext
	net       podnet.Pod
	volPaths  map[string]string
	startTime metav1.Time
	waitMsg   string // why the pod is not started yet
	initDone  bool
	failed    string // a terminal failure reason (init container failed with restartPolicy Never)
	init      []*ctrState
	ctrs      []*ctrState
	grace     time.Duration
	// graceCut is closed (and replaced) when a later deletion shortens
	// grace, so that terminations under way count down the shorter one.
	graceCut chan struct{}
	stopping bool
	conds    map[corev1.PodConditionType]corev1.PodCondition
	volset   *volumeSet // used by setup, then by resyncVolumes only
}

func newPodRuntime(k *provider, pod *corev1.Pod) *podRuntime {
	ctx, cancel := context.WithCancel(context.Background())
	r := &podRuntime{
		k: k, pod: pod, ctx: ctx, cancel: cancel,
		uid: pod.UID, name: pod.Name, restartPolicy: pod.Spec.RestartPolicy,
		log:       k.log.With("pod", pod.Namespace+"/"+pod.Name),
		dir:       filepath.Join(k.cfg.Dir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		done:      make(chan struct{}),
		dirty:     make(chan struct{}, 1),
		startTime: metav1.Now(),
		conds:     map[corev1.PodConditionType]corev1.PodCondition{},
		graceCut:  make(chan struct{}),
	}
	for i := range pod.Spec.InitContainers {
		r.init = append(r.init, newCtrState(pod.Spec.InitContainers[i], true))
	}
	for i := range pod.Spec.Containers {
		r.ctrs = append(r.ctrs, newCtrState(pod.Spec.Containers[i], false))
	}
	r.volset = newVolumeSet(filepath.Join(r.dir, "volumes"))
	r.grace = 30 * time.Second
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		r.grace = time.Duration(*g) * time.Second
	}
	return r
}

// changed marks the status dirty; the notifier reports the latest one.
func (r *podRuntime) changed() {
	select {
	case r.dirty <- struct{}{}:
	default:
	}
}

// run drives the pod to the end: setup, init containers, containers,
// teardown. It closes r.done when the pod is gone from the host.
func (r *podRuntime) run() {
	defer close(r.done)
	defer r.teardown()
	if !r.setup() {
		r.finish()
		return
	}
	guard.Go("kubelet: volume resync", func() { r.resyncVolumes() })
	for _, c := range r.init {
		if ok := r.runContainer(c); !ok {
			r.mu.Lock()
			if r.ctx.Err() == nil {
				r.failed = fmt.Sprintf("init container %s failed", c.spec.Name)
			}
			r.mu.Unlock()
			r.finish()
			return
		}
	}
	r.mu.Lock()
	r.initDone = true
	r.mu.Unlock()
	r.changed()
	var wg sync.WaitGroup
	for _, c := range r.ctrs {
		wg.Add(1)
		guard.Go("kubelet: container runner", func() { defer wg.Done(); r.runContainer(c) })
	}
	wg.Wait()
	r.finish()
}

// setup attaches the pod's network and writes its volumes, retrying until
// it works or the pod is deleted; it reports whether the pod may start.
func (r *podRuntime) setup() bool {
	delay := time.Second
	for {
		err := r.trySetup()
		if err == nil {
			return true
		}
		r.log.Warn("pod not started yet", "err", err)
		r.mu.Lock()
		r.waitMsg = err.Error()
		r.mu.Unlock()
		r.changed()
		select {
		case <-r.ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(delay*2, 10*time.Second)
	}
}

func (r *podRuntime) trySetup() error {
	ctx := r.ctx
	r.mu.Lock()
	pod := r.pod
	attached := r.net.IP.IsValid()
	r.mu.Unlock()
	if pod.Spec.HostNetwork {
		return fmt.Errorf("hostNetwork pods are not supported by the process kubelet")
	}
	if !attached {
		hostname := podHostname(pod)
		n, err := r.k.cfg.Network.AddPod(ctx, podnet.PodSpec{
			UID:        string(pod.UID),
			ResolvConf: resolvConf(pod, r.k.cfg.DNS, r.k.cfg.ClusterDomain),
			Hosts:      "", // written below once the IP is known
		})
		if err != nil {
			return fmt.Errorf("pod network: %w", err)
		}
		if err := os.WriteFile(filepath.Join("/etc/netns", n.NetNS, "hosts"), []byte(hostsFile(pod, n.IP, r.k.cfg.ClusterDomain)), 0o644); err != nil {
			return fmt.Errorf("pod hosts file: %w", err)
		}
		r.mu.Lock()
		r.net = n
		r.pc = &podContext{pod: pod, podIP: n.IP, hostIP: r.k.cfg.Network.Gateway(), apiServer: r.k.cfg.APIServer,
			hostname: hostname, capacity: r.k.capacity}
		r.setCond(corev1.PodReadyToStartContainers, true, "")
		r.mu.Unlock()
		r.changed()
	}
	if err := os.MkdirAll(filepath.Join(r.dir, "logs"), 0o755); err != nil {
		return err
	}
	return r.syncVolumes()
}

func (r *podRuntime) syncVolumes() error {
	r.mu.Lock()
	pc := *r.pc
	pc.pod = r.pod
	r.mu.Unlock()
	paths, err := r.volset.sync(r.ctx, &pc, r.k.obj)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.volPaths = paths
	r.mu.Unlock()
	return nil
}

// resyncVolumes refreshes Secret, ConfigMap and projected volumes (and
// tokens) while the pod runs, as the kubelet does: when an object they
// mount changes (see volwatch.go) and every VolumeResync.
func (r *podRuntime) resyncVolumes() {
	t := time.NewTicker(r.k.cfg.VolumeResync)
	defer t.Stop()
	changed := make(chan struct{}, 1)
	r.mu.Lock()
	pod := r.pod
	r.mu.Unlock()
	watchVolumeObjects(r.ctx, r.k.client, pod, changed)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-changed:
			if err := r.syncVolumes(); err != nil {
				r.log.Warn("volume sync after a change", "err", err)
			}
		case <-t.C:
			if err := r.syncVolumes(); err != nil {
				r.log.Warn("volume resync", "err", err)
			}
		}
	}
}

// isStopping reports whether stop was called.
func (r *podRuntime) isStopping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopping
}

// stop asks the pod to terminate its containers within grace. Called
// again while they terminate (a second deletion), it can only shorten the
// grace period, as the kubelet honours a shorter one.
func (r *podRuntime) stop(grace *int64) {
	r.mu.Lock()
	if grace != nil {
		g := time.Duration(*grace) * time.Second
		switch {
		case !r.stopping:
			r.grace = g
		case g < r.grace:
			r.grace = g
			close(r.graceCut)
			r.graceCut = make(chan struct{})
		}
	}
	r.stopping = true
	r.mu.Unlock()
	r.cancel()
}

// finish marks every container that is not terminated as terminated, so
// the final status is terminal.
func (r *podRuntime) finish() {
	r.mu.Lock()
	now := metav1.Now()
	for _, c := range append(append([]*ctrState{}, r.init...), r.ctrs...) {
		if c.state.Terminated == nil {
			if c.state.Running != nil {
				c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "Error", StartedAt: c.state.Running.StartedAt, FinishedAt: now}}
			} else {
				c.state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "ContainerStatusUnknown", Message: "the pod stopped before this container ran", FinishedAt: now}}
			}
		}
		c.ready = false
	}
	r.mu.Unlock()
	r.changed()
}

// teardown removes the pod's network namespace and volumes; logs stay.
func (r *podRuntime) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.k.cfg.Network.RemovePod(ctx, string(r.uid)); err != nil {
		r.log.Warn("remove pod network", "err", err)
	}
	if err := os.RemoveAll(filepath.Join(r.dir, "volumes")); err != nil {
		r.log.Warn("remove pod volumes", "err", err)
	}
}
