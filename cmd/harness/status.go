package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/clusters"
)

// runStatus is `harness status`: clusters, nodes, pods, load balancers and
// kubeconfig contexts of the running environment(s).
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "", "topology file whose environment to show")
	name := fs.String("name", "", "environment name (default: every environment with state)")
	var pf providerFlags
	pf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := pf.provider(nil)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	names, err := pf.names(*topo, *name)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if len(names) == 0 {
		fmt.Fprintln(stdout, "nothing is up; run `harness up --topology FILE`")
		return nil
	}
	var errs []error
	for _, n := range names {
		env, err := p.Status(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, printEnv(ctx, stdout, env))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

func printEnv(ctx context.Context, w io.Writer, env *clusters.Environment) error {
	fmt.Fprintf(w, "environment %s\nkubeconfig  %s\n", env.Name, env.Kubeconfig)
	if env.DNS.IsValid() {
		fmt.Fprintf(w, "external DNS %s\n", env.DNS)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	defer tw.Flush()
	var errs []error
	for _, c := range env.Clusters {
		fmt.Fprintf(tw, "\ncluster %s\tcontext %s\t%s\n", c.Name, c.Context, c.APIServer)
		cs, err := env.Client(c.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
			continue
		}
		for _, n := range nodes.Items {
			fmt.Fprintf(tw, "  node\t%s\t%s\t\n", n.Name, nodeReady(n))
		}
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
			continue
		}
		for _, p := range pods.Items {
			fmt.Fprintf(tw, "  pod\t%s/%s\t%s\t%s %s\n", p.Namespace, p.Name, p.Status.Phase, p.Status.PodIP, p.Spec.NodeName)
		}
		for _, lb := range c.LoadBalancers {
			var ports []string
			for _, p := range lb.Ports {
				ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
			}
			fmt.Fprintf(tw, "  lb\t%s/%s\t%s %s\t%s\n", lb.Namespace, lb.Service, lb.Addr, strings.Join(ports, ","), strings.Join(lb.Hostnames, ","))
		}
	}
	return errors.Join(errs...)
}

func nodeReady(n corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return "Ready"
		}
	}
	return "NotReady"
}
