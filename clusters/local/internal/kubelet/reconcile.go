package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// statusRepairInterval is how often the API's pod statuses are compared
// with the provider's.
const statusRepairInterval = 2 * time.Second

// repairRequestTimeout bounds each API request of a repair pass.
const repairRequestTimeout = 5 * time.Second

// repairStatuses closes a gap in virtual-kubelet's status path: now and then
// a notification is lost (seen when a container exits within a few hundred
// milliseconds of its pod's creation), and the API then shows a container
// running that is long gone, until the pod is deleted. Every interval it
// compares each pod's status in the API with the provider's and writes the
// provider's when the two have differed in the same way on two passes in a
// row, so an update that virtual-kubelet has in flight is left alone.
func (k *provider) repairStatuses(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var pending map[string]string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pending = k.repairPass(ctx, pending)
		}
	}
}

// repairPass runs one comparison. pending maps the pods whose statuses
// differed on the previous pass to the provider's status digest then; the
// result is the same for this pass.
func (k *provider) repairPass(ctx context.Context, pending map[string]string) map[string]string {
	// A stalled request must not stall the repairs: the pass gives up and
	// the next one retries.
	lctx, cancel := context.WithTimeout(ctx, repairRequestTimeout)
	defer cancel()
	list, err := k.client.CoreV1().Pods(metav1.NamespaceAll).List(lctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", k.cfg.NodeName).String(),
	})
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn("status repair: list pods", "err", err)
		}
		return pending
	}
	k.mu.Lock()
	runtimes := make(map[string]*podRuntime, len(k.pods))
	for key, r := range k.pods {
		runtimes[key] = r
	}
	k.mu.Unlock()
	next := map[string]string{}
	for i := range list.Items {
		inAPI := &list.Items[i]
		kk := key(inAPI.Namespace, inAPI.Name)
		r, ok := runtimes[kk]
		if !ok || r.uid != inAPI.UID || inAPI.DeletionTimestamp != nil ||
			inAPI.Status.Phase == corev1.PodSucceeded || inAPI.Status.Phase == corev1.PodFailed {
			continue // not ours, being deleted, or final already
		}
		ours := r.snapshot()
		want, have := statusDigest(ours.Status), statusDigest(inAPI.Status)
		if want == have {
			continue
		}
		if pending[kk] != want {
			next[kk] = want // a first sighting: virtual-kubelet may be on it
			continue
		}
		fixed := inAPI.DeepCopy()
		fixed.Status = ours.Status
		uctx, cancel := context.WithTimeout(ctx, repairRequestTimeout)
		_, err := k.client.CoreV1().Pods(fixed.Namespace).UpdateStatus(uctx, fixed, metav1.UpdateOptions{})
		cancel()
		if err != nil {
			k.log.Warn("status repair: update", "pod", kk, "err", err)
			next[kk] = want
			continue
		}
		k.log.Info("repaired a pod status the API had missed", "pod", kk, "api", have, "provider", want)
	}
	return next
}

// statusDigest sums up what readers of a pod's status act on: its phase
// and each container's state, exit code, readiness and restarts.
func statusDigest(s corev1.PodStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ip=%s", s.Phase, s.PodIP)
	for _, group := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for _, c := range group {
			state := "waiting"
			switch {
			case c.State.Running != nil:
				state = "running"
			case c.State.Terminated != nil:
				state = fmt.Sprintf("exited(%d)", c.State.Terminated.ExitCode)
			}
			fmt.Fprintf(&b, " %s=%s,ready=%t,restarts=%d", c.Name, state, c.Ready, c.RestartCount)
		}
	}
	return b.String()
}
