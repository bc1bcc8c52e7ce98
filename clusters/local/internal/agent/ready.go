package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
)

// waitClusterReady waits until every node of c is Ready and the default
// ServiceAccount exists (pods cannot be created before it), or timeout.
func waitClusterReady(ctx context.Context, c *cluster, timeout time.Duration) error {
	cs, err := clusters.Client(c.cp.Kubeconfig, "")
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.plan.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	status := "no answer yet"
	for {
		if err := c.early(); err != nil {
			return err
		}
		ready, msg := clusterReady(ctx, cs, c.nodes)
		if ready {
			return nil
		}
		status = msg
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %s", timeout, status)
		case <-tick.C:
		}
	}
}

func clusterReady(ctx context.Context, cs kubernetes.Interface, want int) (bool, string) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, "list nodes: " + err.Error()
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue && !hasNotReadyTaint(n) {
				ready++
			}
		}
	}
	if ready < want {
		return false, fmt.Sprintf("%d of %d nodes Ready", ready, want)
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return false, "default ServiceAccount: " + err.Error()
	}
	return true, ""
}

// hasNotReadyTaint reports whether admission's not-ready taint is still on
// the node (node-lifecycle-controller lifts it once the node reports Ready).
func hasNotReadyTaint(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return true
		}
	}
	return false
}
