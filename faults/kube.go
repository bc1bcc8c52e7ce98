package faults

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults/internal/journal"
)

// Cluster is how a pod, workload or certificate fault reaches one
// cluster's API: a kubeconfig path and context.
type Cluster struct {
	// Kubeconfig is the kubeconfig file; Context the context in it (""
	// = its current context).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	// clientset, when set (tests), is used instead of loading Kubeconfig. Faults that
	// change objects still journal Kubeconfig/Context, so that a killed
	// run's changes can be restored only when those are set too.
	clientset kubernetes.Interface `json:"-"`
}

func (c Cluster) client() (kubernetes.Interface, error) {
	if c.clientset != nil {
		return c.clientset, nil
	}
	return clientFor(journal.Cluster{Kubeconfig: c.Kubeconfig, Context: c.Context})
}

func (c Cluster) ref() journal.Cluster {
	return journal.Cluster{Kubeconfig: c.Kubeconfig, Context: c.Context}
}

// String names the cluster by context, else by kubeconfig.
func (c Cluster) String() string {
	if c.Context != "" {
		return c.Context
	}
	return c.Kubeconfig
}

func clientFor(c journal.Cluster) (kubernetes.Interface, error) {
	return clusters.Client(c.Kubeconfig, c.Context)
}

// podsOf returns the pods named name, or matching selector.
func podsOf(ctx context.Context, cs kubernetes.Interface, ns, name, selector string) ([]podRef, error) {
	if name != "" {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get pod %s/%s: %w", ns, name, err)
		}
		return []podRef{{p.Name, string(p.UID)}}, nil
	}
	if selector == "" {
		return nil, errors.New("name a pod or give a label selector")
	}
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list pods %s in %s: %w", selector, ns, err)
	}
	var out []podRef
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, podRef{p.Name, string(p.UID)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no running pod matches %q in namespace %s", selector, ns)
	}
	return out, nil
}

type podRef struct{ name, uid string }

// LBLookup returns a ParamEnv.LookupLB that reads a Service's
// load-balancer address from its status through kubeconfig (context =
// cluster name); port 0 picks the Service's first port.
func LBLookup(kubeconfig string) func(ctx context.Context, cluster, namespace, service string, port uint16) (netip.AddrPort, error) {
	return func(ctx context.Context, cluster, namespace, service string, port uint16) (netip.AddrPort, error) {
		cs, err := clientFor(journal.Cluster{Kubeconfig: kubeconfig, Context: cluster})
		if err != nil {
			return netip.AddrPort{}, err
		}
		s, err := cs.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("get service %s/%s in %s: %w", namespace, service, cluster, err)
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return netip.AddrPort{}, fmt.Errorf("service %s/%s in %s has no load-balancer address yet", namespace, service, cluster)
		}
		addr, err := netip.ParseAddr(s.Status.LoadBalancer.Ingress[0].IP)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("service %s/%s in %s: load-balancer IP %q: %w", namespace, service, cluster, s.Status.LoadBalancer.Ingress[0].IP, err)
		}
		if port == 0 {
			if len(s.Spec.Ports) == 0 {
				return netip.AddrPort{}, fmt.Errorf("service %s/%s has no ports", namespace, service)
			}
			port = uint16(s.Spec.Ports[0].Port)
		}
		return netip.AddrPortFrom(addr, port), nil
	}
}
