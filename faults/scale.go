package faults

import (
	"context"
	"fmt"

	"github.com/nvcf/conformance/faults/internal/journal"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// scale sets a Deployment's or StatefulSet's replicas; the undo restores
// the count it found.
type scale struct {
	Cluster   Cluster
	Namespace string
	// Workload is "Deployment" or "StatefulSet".
	Workload string
	Name     string
	Replicas int32
}

// Kind is kindScale.
func (scale) Kind() Kind { return kindScale }

// Describe names the workload and the count.
func (s scale) Describe() string {
	return fmt.Sprintf("%s %s/%s replicas=%d", s.Workload, s.Namespace, s.Name, s.Replicas)
}

// replicas reads a workload's spec.replicas.
func replicas(ctx context.Context, cs kubernetes.Interface, ns, kind, name string) (int32, error) {
	var r *int32
	switch kind {
	case "Deployment":
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("get deployment %s/%s: %w", ns, name, err)
		}
		r = d.Spec.Replicas
	case "StatefulSet":
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("get statefulset %s/%s: %w", ns, name, err)
		}
		r = s.Spec.Replicas
	default:
		return 0, fmt.Errorf("workload kind %q: want Deployment or StatefulSet", kind)
	}
	if r == nil {
		return 1, nil
	}
	return *r, nil
}

// setScale sets a workload's spec.replicas, retrying on conflicts.
func setScale(ctx context.Context, cs kubernetes.Interface, ns, kind, name string, n int32) error {
	var err error
	for range 5 {
		switch kind {
		case "Deployment":
			var d *appsv1.Deployment
			if d, err = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				d.Spec.Replicas = &n
				_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
			}
		case "StatefulSet":
			var s *appsv1.StatefulSet
			if s, err = cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				s.Spec.Replicas = &n
				_, err = cs.AppsV1().StatefulSets(ns).Update(ctx, s, metav1.UpdateOptions{})
			}
		default:
			return fmt.Errorf("workload kind %q: want Deployment or StatefulSet", kind)
		}
		if err == nil || !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("scale %s %s/%s to %d: %w", kind, ns, name, n, err)
	}
	return nil
}

func (s scale) inject(ctx context.Context, e *env) (undoFunc, error) {
	cs, err := s.Cluster.client()
	if err != nil {
		return nil, err
	}
	orig, err := replicas(ctx, cs, s.Namespace, s.Workload, s.Name)
	if err != nil {
		return nil, err
	}
	if err := e.persist(journal.Cleanup{Scale: &journal.Scale{Cluster: s.Cluster.ref(), Namespace: s.Namespace, Kind: s.Workload, Name: s.Name, Replicas: orig}}); err != nil {
		return nil, err
	}
	if err := setScale(ctx, cs, s.Namespace, s.Workload, s.Name, s.Replicas); err != nil {
		return nil, err
	}
	e.note("replicas %d -> %d -> %d", orig, s.Replicas, orig)
	return func(ctx context.Context) error { return setScale(ctx, cs, s.Namespace, s.Workload, s.Name, orig) }, nil
}

func restoreScale(ctx context.Context, s journal.Scale) error {
	cs, err := clientFor(s.Cluster)
	if err != nil {
		return err
	}
	return setScale(ctx, cs, s.Namespace, s.Kind, s.Name, s.Replicas)
}
