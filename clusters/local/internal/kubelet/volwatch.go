package kubelet

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// A pod's Secret and ConfigMap volumes follow their objects as they change,
// not only on the periodic resync: the kubelet watches each object a
// running pod mounts (one watch per object, selected by name, which the
// Node authorizer allows for objects its pods use) and resyncs the pod's
// volumes on every change. A rotated certificate then reaches the pod in
// well under a second rather than up to a resync period later.

// volumeObjects lists the Secrets and ConfigMaps pod's volumes mount,
// each once.
func volumeObjects(pod *corev1.Pod) (secrets, configMaps []string) {
	seen := map[string]bool{}
	add := func(list *[]string, kind, name string) {
		if name != "" && !seen[kind+"/"+name] {
			seen[kind+"/"+name] = true
			*list = append(*list, name)
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			add(&secrets, "secret", v.Secret.SecretName)
		case v.ConfigMap != nil:
			add(&configMaps, "configmap", v.ConfigMap.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					add(&secrets, "secret", s.Secret.Name)
				}
				if s.ConfigMap != nil {
					add(&configMaps, "configmap", s.ConfigMap.Name)
				}
			}
		}
	}
	return secrets, configMaps
}

// watchVolumeObjects signals changed (without blocking, coalescing) each
// time a Secret or ConfigMap the pod mounts changes, until ctx ends. A
// watch that ends or fails is opened again after a pause.
func watchVolumeObjects(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, changed chan<- struct{}) {
	if client == nil {
		return
	}
	secrets, configMaps := volumeObjects(pod)
	ns := pod.Namespace
	for _, name := range secrets {
		go watchObject(ctx, changed, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Secrets(ns).Watch(ctx, o)
		}, name)
	}
	for _, name := range configMaps {
		go watchObject(ctx, changed, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		}, name)
	}
}

// watchRetry is the pause before a failed or ended watch is opened again.
const watchRetry = time.Second

func watchObject(ctx context.Context, changed chan<- struct{}, open func(context.Context, metav1.ListOptions) (watch.Interface, error), name string) {
	opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	for ctx.Err() == nil {
		w, err := open(ctx, opts)
		if err == nil {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
					select {
					case changed <- struct{}{}:
					default:
					}
				}
			}
			w.Stop()
		} else if apierrors.IsForbidden(err) {
			return // the periodic resync still covers it
		}
		if !sleepCtx(ctx, watchRetry) {
			return
		}
	}
}
