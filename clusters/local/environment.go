package local

import (
	"context"
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// environment turns the state into an Environment, reading each cluster's
// load balancers from its API.
func environment(ctx context.Context, st *state.State) (*clusters.Environment, error) {
	env := &clusters.Environment{Name: st.Spec.Name, Kubeconfig: st.Kubeconfig}
	if st.Marker != "" {
		env.ProcessEnv = []string{proc.MarkerVar(st.Marker)}
	}
	if ap, err := netip.ParseAddrPort(st.DNS); err == nil {
		env.DNS = ap
	}
	for _, c := range st.Clusters {
		info := clusters.ClusterInfo{Name: c.Name, Context: c.Name, APIServer: c.APIServer, Nodes: c.Nodes, Network: network(c.Index, c.Name)}
		lbs, err := loadBalancers(ctx, st.Kubeconfig, c.Name)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		info.LoadBalancers = lbs
		env.Clusters = append(env.Clusters, info)
	}
	return env, nil
}

// network is cluster i's address plan. The state records each cluster's
// index, not its ranges: the plan derives them, for states of earlier
// versions too.
func network(i int, name string) clusters.Network {
	p := plan.For(i, name)
	return clusters.Network{
		Pods:          p.PodPrefix(),
		Gateway:       p.BridgeIP(),
		Bridge:        p.Bridge(),
		DNS:           p.ClusterDNS(),
		Services:      p.ServicePrefix(),
		LoadBalancers: p.LBPool(),
	}
}

// loadBalancers lists the Services of type LoadBalancer that have an address.
func loadBalancers(ctx context.Context, kubeconfig, context string) ([]clusters.LoadBalancer, error) {
	cs, err := clusters.Client(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	svcs, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	var out []clusters.LoadBalancer
	for _, s := range svcs.Items {
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		for _, ing := range s.Status.LoadBalancer.Ingress {
			addr, err := netip.ParseAddr(ing.IP)
			if err != nil {
				continue
			}
			lb := clusters.LoadBalancer{Namespace: s.Namespace, Service: s.Name, Addr: addr}
			lb.Hostnames = clusters.ExternalHostnames(s.Annotations)
			for _, p := range s.Spec.Ports {
				lb.Ports = append(lb.Ports, clusters.Port{Name: p.Name, Protocol: string(p.Protocol), Port: p.Port})
			}
			out = append(out, lb)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Service < out[j].Namespace+"/"+out[j].Service
	})
	return out, nil
}
