package faults

import (
	"context"
	"fmt"

	"github.com/nvcf/conformance/faults/internal/journal"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Scale sets a Deployment's or StatefulSet's replicas; the undo restores
// the count it found.
type Scale struct {
	Cluster   Cluster
	Namespace string
	// Workload is "Deployment" or "StatefulSet".
	Workload string
	Name     string
	Replicas int32
}

// Kind is KindScale.
func (Scale) Kind() Kind { return KindScale }

// Describe names the workload and the count.
func (s Scale) Describe() string {
	return fmt.Sprintf("%s %s/%s replicas=%d", s.Workload, s.Namespace, s.Name, s.Replicas)
}

func getScale(ctx context.Context, cs kubernetes.Interface, ns, kind, name string) (*autoscalingv1.Scale, error) {
	switch kind {
	case "Deployment":
		return cs.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
	case "StatefulSet":
		return cs.AppsV1().StatefulSets(ns).GetScale(ctx, name, metav1.GetOptions{})
	}
	return nil, fmt.Errorf("workload kind %q: want Deployment or StatefulSet", kind)
}

func setScale(ctx context.Context, cs kubernetes.Interface, ns, kind, name string, replicas int32) error {
	sc, err := getScale(ctx, cs, ns, kind, name)
	if err != nil {
		return fmt.Errorf("get scale of %s %s/%s: %w", kind, ns, name, err)
	}
	sc.Spec.Replicas = replicas
	switch kind {
	case "Deployment":
		_, err = cs.AppsV1().Deployments(ns).UpdateScale(ctx, name, sc, metav1.UpdateOptions{})
	default:
		_, err = cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, name, sc, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("scale %s %s/%s to %d: %w", kind, ns, name, replicas, err)
	}
	return nil
}

func (s Scale) inject(ctx context.Context, e *env) (Undo, error) {
	cs, err := s.Cluster.client()
	if err != nil {
		return nil, err
	}
	cur, err := getScale(ctx, cs, s.Namespace, s.Workload, s.Name)
	if err != nil {
		return nil, fmt.Errorf("get scale of %s %s/%s: %w", s.Workload, s.Namespace, s.Name, err)
	}
	orig := cur.Spec.Replicas
	if err := e.persist(journal.Cleanup{Scale: &journal.Scale{Cluster: s.Cluster.ref(), Namespace: s.Namespace, Kind: s.Workload, Name: s.Name, Replicas: orig}}); err != nil {
		return nil, err
	}
	if err := setScale(ctx, cs, s.Namespace, s.Workload, s.Name, s.Replicas); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return setScale(ctx, cs, s.Namespace, s.Workload, s.Name, orig) }, nil
}

func restoreScale(ctx context.Context, s journal.Scale) error {
	cs, err := clientFor(s.Cluster)
	if err != nil {
		return err
	}
	return setScale(ctx, cs, s.Namespace, s.Kind, s.Name, s.Replicas)
}
