package kubelet

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// provider is the virtual-kubelet provider: it maps the pod controller's
// calls onto podRuntimes.
type provider struct {
	cfg      Config
	log      *slog.Logger
	obj      objects
	client   kubernetes.Interface // nil in tests without an apiserver
	capacity corev1.ResourceList

	mu     sync.Mutex
	pods   map[string]*podRuntime // namespace/name
	notify func(*corev1.Pod)
}

var (
	_ nodeutil.Provider = (*provider)(nil)
	_ interface {
		NotifyPods(context.Context, func(*corev1.Pod))
	} = (*provider)(nil)
)

func key(namespace, name string) string { return namespace + "/" + name }

// CreatePod starts the pod in the background; setup problems (a missing
// Secret, say) show in its status while it retries.
func (k *provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	kk := key(pod.Namespace, pod.Name)
	k.mu.Lock()
	old := k.pods[kk]
	k.mu.Unlock()
	if old != nil {
		if old.uid == pod.UID {
			return k.UpdatePod(ctx, pod)
		}
		// A pod of the same name (a StatefulSet replacement) while the old
		// one still tears down.
		old.stop(nil)
		select {
		case <-old.done:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
			return errdefs.InvalidInputf("pod %s: the previous pod of that name is still stopping", kk)
		}
	}
	r := newPodRuntime(k, pod.DeepCopy())
	k.mu.Lock()
	k.pods[kk] = r
	k.mu.Unlock()
	guard.Go("kubelet: pod runtime", func() { r.run() })
	guard.Go("kubelet: pod status notifier", func() { k.notifier(r) })
	r.changed()
	return nil
}

// UpdatePod takes the new object (labels, annotations); a changed
// container spec is not applied to running processes. An object of another
// UID is a replacement of the same name: CreatePod starts it once the old
// one has stopped. (Refusing it would make virtual-kubelet mark the new pod
// Failed when its restartPolicy is Never.)
func (k *provider) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	r := k.get(pod.Namespace, pod.Name)
	if r != nil && r.uid != pod.UID {
		return k.CreatePod(ctx, pod)
	}
	if r == nil {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	r.mu.Lock()
	r.pod = pod.DeepCopy()
	r.mu.Unlock()
	r.changed()
	return nil
}

// DeletePod stops the pod's containers gracefully in the background; the
// terminal status is reported through NotifyPods.
func (k *provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	r := k.get(pod.Namespace, pod.Name)
	if r == nil || (pod.UID != "" && r.uid != pod.UID) {
		return errdefs.NotFoundf("pod %s/%s is not on this node", pod.Namespace, pod.Name)
	}
	grace := pod.DeletionGracePeriodSeconds
	if grace == nil {
		grace = pod.Spec.TerminationGracePeriodSeconds
	}
	r.stop(grace)
	guard.Go("kubelet: pod deletion", func() {
		<-r.done
		k.mu.Lock()
		if k.pods[key(pod.Namespace, pod.Name)] == r {
			delete(k.pods, key(pod.Namespace, pod.Name))
		}
		k.mu.Unlock()
		k.forget(pod)
	})
	return nil
}

// forget deletes a stopped pod from the API at once, as the kubelet does
// once every container has terminated (grace 0, only this UID). Without it
// the pod controller would leave it Terminating until its grace period ends,
// delaying a StatefulSet's replacement by up to 30 s.
func (k *provider) forget(pod *corev1.Pod) {
	if k.client == nil || pod.DeletionTimestamp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	zero, uid := int64(0), pod.UID
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.log.Warn("delete stopped pod from the API", "pod", key(pod.Namespace, pod.Name), "err", err)
	}
}

func (k *provider) get(namespace, name string) *podRuntime {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pods[key(namespace, name)]
}

// GetPod returns the pod with its current status. A pod that is stopping
// is no longer on the node for virtual-kubelet: it asks GetPod by name
// only, and a same-name replacement (a StatefulSet's, or a pod deleted at
// once and created again) must then reach CreatePod, not be compared with
// the old pod and skipped or refused.
func (k *provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	r := k.get(namespace, name)
	if r == nil || r.isStopping() {
		return nil, errdefs.NotFoundf("pod %s/%s is not on this node", namespace, name)
	}
	return r.snapshot(), nil
}

// GetPodStatus returns the pod's current status.
func (k *provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	p, err := k.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &p.Status, nil
}

// GetPods returns every pod on the node.
func (k *provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	k.mu.Lock()
	rs := make([]*podRuntime, 0, len(k.pods))
	for _, r := range k.pods {
		rs = append(rs, r)
	}
	k.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].Namespace, out[i].Name) < key(out[j].Namespace, out[j].Name) })
	return out, nil
}

// NotifyPods registers the pod controller's status callback.
func (k *provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	k.mu.Lock()
	k.notify = cb
	k.mu.Unlock()
}

// notifier reports r's latest status after each change, and a last time
// once r is gone from the host.
func (k *provider) notifier(r *podRuntime) {
	var phase corev1.PodPhase
	send := func() {
		k.mu.Lock()
		cb := k.notify
		k.mu.Unlock()
		if cb == nil {
			return
		}
		p := r.snapshot()
		if p.Status.Phase != phase {
			// One line per phase change, to follow a status through
			// virtual-kubelet to the API when one goes missing.
			r.log.Info("pod phase reported", "phase", p.Status.Phase)
			phase = p.Status.Phase
		}
		cb(p)
	}
	for {
		select {
		case <-r.dirty:
			send()
		case <-r.done:
			send()
			return
		}
	}
}

// snapshot is a copy of the pod with its current status.
func (r *podRuntime) snapshot() *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pod.DeepCopy()
	p.Status = r.status()
	return p
}

// stopAll stops every pod (agent shutdown) and waits, at most until ctx ends.
func (k *provider) stopAll(ctx context.Context) {
	k.mu.Lock()
	rs := make([]*podRuntime, 0, len(k.pods))
	for _, r := range k.pods {
		rs = append(rs, r)
	}
	k.mu.Unlock()
	for _, r := range rs {
		r.stop(nil)
	}
	for _, r := range rs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return
		}
	}
}

// AttachToContainer is not supported.
func (k *provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by the nvcf process kubelet")
}

// PortForward is not supported (pods are reachable from the host directly).
func (k *provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errdefs.InvalidInput("port-forward is not supported by the nvcf process kubelet; dial the pod IP from the host")
}

// GetStatsSummary returns an empty summary (no resource accounting).
func (k *provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: k.cfg.NodeName}}, nil
}

// GetMetricsResource returns no metrics.
func (k *provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) { return nil, nil }
