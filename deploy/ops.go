package deploy

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
)

// PodNames lists the pods of a cluster matching a label selector (e.g.
// "app.kubernetes.io/name=stargate"), sorted, leaving out terminating pods.
func (d *Deployer) PodNames(ctx context.Context, cluster, selector string) ([]string, error) {
	cs, err := d.client(cluster)
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("pod selector %q: %w", selector, err)
	}
	pods, err := listPodsBy(ctx, cs, d.opts.Namespace, sel)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster, err)
	}
	var out []string
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// StargatePods lists a cluster's ready, non-terminating Stargate pods, sorted.
func (d *Deployer) StargatePods(ctx context.Context, cluster string) ([]string, error) {
	cs, err := d.client(cluster)
	if err != nil {
		return nil, err
	}
	return d.readyPodNames(ctx, cs, StargateSelector())
}

func (d *Deployer) readyPodNames(ctx context.Context, cs kubernetes.Interface, sel labels.Selector) ([]string, error) {
	pods, err := listPodsBy(ctx, cs, d.opts.Namespace, sel)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		if p.DeletionTimestamp == nil && podReady(p) {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// stargateKind is the current cell's Stargate kind in a stargate cluster.
func (d *Deployer) stargateKind(cluster string) (matrix.Kind, error) {
	c, ok := d.opts.Topology.Cluster(cluster)
	if !ok || c.Role != topology.RoleStargate {
		return "", fmt.Errorf("cluster %q is not a stargate cluster of topology %q", cluster, d.opts.Topology.Name)
	}
	return d.opts.Cell.KindFor(stargateIndex(d.opts.Topology, cluster)), nil
}

// Scale sets the replicas of a cluster's Stargate workload and waits until
// exactly that many pods are ready (within Options.Timeout). The next Apply
// restores the topology's replica count.
func (d *Deployer) Scale(ctx context.Context, cluster string, replicas int) error {
	if replicas < 0 {
		return fmt.Errorf("scale %q: replicas %d is negative", cluster, replicas)
	}
	kind, err := d.stargateKind(cluster)
	if err != nil {
		return err
	}
	cs, err := d.client(cluster)
	if err != nil {
		return err
	}
	ns, name := d.opts.Namespace, manifests.StargateName
	sc := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       autoscalingv1.ScaleSpec{Replicas: int32(replicas)},
	}
	if kind == matrix.KindStatefulSet {
		cur, err := cs.AppsV1().StatefulSets(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err == nil {
			sc.ResourceVersion = cur.ResourceVersion
			_, err = cs.AppsV1().StatefulSets(ns).UpdateScale(ctx, name, sc, metav1.UpdateOptions{FieldManager: FieldManager})
		}
		if err != nil {
			return fmt.Errorf("cluster %q: scale statefulset %s/%s to %d: %w", cluster, ns, name, replicas, err)
		}
	} else {
		cur, err := cs.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err == nil {
			sc.ResourceVersion = cur.ResourceVersion
			_, err = cs.AppsV1().Deployments(ns).UpdateScale(ctx, name, sc, metav1.UpdateOptions{FieldManager: FieldManager})
		}
		if err != nil {
			return fmt.Errorf("cluster %q: scale deployment %s/%s to %d: %w", cluster, ns, name, replicas, err)
		}
	}
	return d.WaitStargates(ctx, cluster)
}

// WaitStargates waits (within Options.Timeout) until a cluster's Stargate
// workload has all its replicas ready and no other Stargate pod remains.
func (d *Deployer) WaitStargates(ctx context.Context, cluster string) error {
	kind, err := d.stargateKind(cluster)
	if err != nil {
		return err
	}
	cs, err := d.client(cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	ns, name := d.opts.Namespace, manifests.StargateName
	if kind == matrix.KindStatefulSet {
		err = waitFor(ctx, "statefulset "+ns+"/"+name+" ready", statefulSetReady(cs, ns, name))
	} else {
		err = waitFor(ctx, "deployment "+ns+"/"+name+" available", deploymentReady(cs, ns, name))
	}
	if err != nil {
		return fmt.Errorf("cluster %q: %w", cluster, err)
	}
	return nil
}

// DeletePod deletes a pod and waits (within Options.Timeout) until it is
// gone, or replaced by a new pod of the same name (a StatefulSet's). It
// does not wait for replacements to become ready; use WaitStargates.
func (d *Deployer) DeletePod(ctx context.Context, cluster, name string) error {
	cs, err := d.client(cluster)
	if err != nil {
		return err
	}
	ns := d.opts.Namespace
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("cluster %q: delete pod %s/%s: %w", cluster, ns, name, err)
	}
	uid := p.UID
	pre := metav1.Preconditions{UID: &uid}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &pre}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %q: delete pod %s/%s: %w", cluster, ns, name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	return waitFor(ctx, "pod "+ns+"/"+name+" gone", func(ctx context.Context) (bool, status, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, status{}, nil
		}
		if err != nil {
			return false, status{}, err
		}
		if p.UID != uid {
			return true, status{}, nil
		}
		return false, says("still there (phase %s, terminating %v)", p.Status.Phase, p.DeletionTimestamp != nil), nil
	})
}
