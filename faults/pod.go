package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/nvcf/conformance/faults/internal/procs"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podDelete deletes pods through the Kubernetes API, gracefully or at
// once. Its undo does nothing: the workload's controller brings pods back.
type podDelete struct {
	Cluster   Cluster
	Namespace string
	// Name deletes one pod; otherwise Selector picks pods by label.
	Name, Selector string
	// Count caps how many matching pods are deleted (0 = 1).
	Count int
	// Immediate deletes with grace period 0 (no SIGTERM grace).
	Immediate bool
}

// Kind is kindPodDelete.
func (podDelete) Kind() Kind { return kindPodDelete }

// Describe names the pods and the grace.
func (d podDelete) Describe() string {
	g := "graceful"
	if d.Immediate {
		g = "grace=0"
	}
	return fmt.Sprintf("%s/%s%s %s count=%d", d.Namespace, d.Name, d.Selector, g, max(d.Count, 1))
}

func (d podDelete) inject(ctx context.Context, e *env) (undoFunc, error) {
	cs, err := d.Cluster.client()
	if err != nil {
		return nil, err
	}
	pods, err := podsOf(ctx, cs, d.Namespace, d.Name, d.Selector)
	if err != nil {
		return nil, err
	}
	opts := metav1.DeleteOptions{}
	if d.Immediate {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	var names []string
	for _, p := range pods[:min(len(pods), max(d.Count, 1))] {
		if err := cs.CoreV1().Pods(d.Namespace).Delete(ctx, p.name, opts); err != nil {
			return nil, fmt.Errorf("delete pod %s/%s: %w", d.Namespace, p.name, err)
		}
		names = append(names, p.name)
	}
	e.note("deleted %s", strings.Join(names, ","))
	return func(context.Context) error { return nil }, nil
}

// podCrash kills the processes of pods without telling Kubernetes, as a
// crash would: on the embedded provider it finds them by the pod's network
// namespace or UID (see internal/procs) on this host. The kubelet sees the
// container exit and restarts it. Its undo does nothing.
type podCrash struct {
	Cluster   Cluster
	Namespace string
	// Name crashes one pod; otherwise Selector picks pods by label.
	Name, Selector string
	// Count caps how many matching pods crash (0 = 1).
	Count int
	// Signal is sent to the processes (0 = SIGKILL).
	Signal syscall.Signal
	// Finder locates processes (zero value: /proc and /run/netns).
	Finder procs.Finder
	// OnHost says the provider runs the cluster's pods as processes on
	// this host (it gave the cluster's address plan): the crash's seam.
	OnHost bool
}

// Kind is kindPodCrash.
func (podCrash) Kind() Kind { return kindPodCrash }

// Describe names the pods and the signal.
func (c podCrash) Describe() string {
	return fmt.Sprintf("%s/%s%s signal=%s count=%d", c.Namespace, c.Name, c.Selector, c.sig(), max(c.Count, 1))
}

func (c podCrash) sig() syscall.Signal {
	if c.Signal == 0 {
		return syscall.SIGKILL
	}
	return c.Signal
}

func (c podCrash) inject(ctx context.Context, e *env) (undoFunc, error) {
	cs, err := c.Cluster.client()
	if err != nil {
		return nil, err
	}
	pods, err := podsOf(ctx, cs, c.Namespace, c.Name, c.Selector)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, p := range pods[:min(len(pods), max(c.Count, 1))] {
		pids, err := c.Finder.PodPIDs(p.uid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(pids) == 0 {
			errs = append(errs, fmt.Errorf("no process of pod %s/%s (uid %s) runs on this host (pod crashes need the embedded provider)", c.Namespace, p.name, p.uid))
			continue
		}
		hit, err := procs.Kill(pids, c.sig())
		if err != nil {
			errs = append(errs, err)
		}
		e.note("killed %s pids %v", p.name, hit)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return func(context.Context) error { return nil }, nil
}
