package deploy

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
)

// Result describes a deployed cell: what scenarios dial and observe.
type Result struct {
	// Cell is the deployed cell.
	Cell matrix.Cell
	// Namespace of every object.
	Namespace string
	// AuthToken is the reverse-tunnel token Stargates require and Pylon
	// sends (a rogue probe uses it for its positive control).
	AuthToken string
	// BootstrapCluster and BootstrapURL are where the base Pylon starts.
	BootstrapCluster string
	BootstrapURL     string
	// Clusters in topology order.
	Clusters []ClusterResult
	// Elapsed is how long the Apply took, readiness waits included.
	Elapsed time.Duration
}

// ClusterResult is one cluster of a Result.
type ClusterResult struct {
	Name      string
	Context   string
	Role      topology.Role
	Namespace string
	// Workloads are the cluster's Deployments and StatefulSets as
	// "Kind/name", in apply order.
	Workloads []string

	// StargateKind is the workload kind of the Stargates (stargate clusters).
	StargateKind matrix.Kind
	// StargateWorkload names the Stargate workload ("stargate").
	StargateWorkload string
	// StargatePods are the ready Stargate pods, sorted, and Identities
	// their advertised identities (IdentityTemplate rendered), same order.
	StargatePods []string
	Identities   []string
	// IdentityTemplate of the cluster, e.g. "{pod_name}.sg.region-a.nvcf.test".
	IdentityTemplate string
	// GRPCURL ("https://<GRPCHost>:50071"), QUICAddr ("<QUICHost>:50072")
	// and HTTPAddr ("<HTTPHost>:8000") are the external endpoints.
	GRPCURL  string
	QUICAddr string
	HTTPAddr string
	// LoadBalancers are the cluster's LoadBalancer Services with their
	// announced hostnames and assigned addresses.
	LoadBalancers []LoadBalancer

	// Pylons are the base Pylon Deployments (workers clusters).
	Pylons []string
}

// LoadBalancer is one LoadBalancer Service as deployed.
type LoadBalancer struct {
	Service   string
	Hostnames []string
	// Addresses are status.loadBalancer.ingress IPs (or hostnames).
	Addresses []string
}

// Cluster returns the named cluster's result.
func (r *Result) Cluster(name string) (ClusterResult, bool) {
	for _, c := range r.Clusters {
		if c.Name == name {
			return c, true
		}
	}
	return ClusterResult{}, false
}

// StargateSelector selects the Stargate pods of either kind.
func StargateSelector() labels.Selector {
	return labels.SelectorFromSet(manifests.Selector(manifests.StargateName, manifests.StargateName))
}

func (d *Deployer) result(ctx context.Context, plans []plan) (*Result, error) {
	t := d.opts.Topology
	b, err := BootstrapCluster(t)
	if err != nil {
		return nil, err
	}
	r := &Result{Cell: d.opts.Cell, Namespace: d.opts.Namespace, AuthToken: d.token, BootstrapCluster: b, BootstrapURL: GRPCURL(t, b)}
	for _, p := range plans {
		cs, err := d.client(p.cluster.Name)
		if err != nil {
			return nil, err
		}
		c := ClusterResult{Name: p.cluster.Name, Context: d.opts.context(p.cluster.Name), Role: p.cluster.Role, Namespace: d.opts.Namespace}
		for _, o := range p.objects {
			switch w := o.(type) {
			case *appsv1.Deployment:
				c.Workloads = append(c.Workloads, string(matrix.KindDeployment)+"/"+w.Name)
				if w.Labels[manifests.NameLabel] == manifests.PylonName {
					c.Pylons = append(c.Pylons, w.Name)
				}
			case *appsv1.StatefulSet:
				c.Workloads = append(c.Workloads, string(matrix.KindStatefulSet)+"/"+w.Name)
			case *corev1.Service:
				if w.Spec.Type != corev1.ServiceTypeLoadBalancer {
					continue
				}
				lb, err := loadBalancer(ctx, cs, w)
				if err != nil {
					return nil, fmt.Errorf("cluster %q: %w", p.cluster.Name, err)
				}
				c.LoadBalancers = append(c.LoadBalancers, lb)
			}
		}
		if s := p.values.Stargate; s != nil {
			c.StargateKind, c.StargateWorkload = s.Kind, manifests.StargateName
			c.IdentityTemplate = s.IdentityTemplate
			c.GRPCURL, c.QUICAddr, c.HTTPAddr = GRPCURL(t, c.Name), QUICAddr(t, c.Name), HTTPAddr(t, c.Name)
			pods, err := d.readyPodNames(ctx, cs, StargateSelector())
			if err != nil {
				return nil, fmt.Errorf("cluster %q: %w", p.cluster.Name, err)
			}
			c.StargatePods = pods
			for _, n := range pods {
				c.Identities = append(c.Identities, t.Identity(c.Name, n))
			}
		}
		r.Clusters = append(r.Clusters, c)
	}
	return r, nil
}

func loadBalancer(ctx context.Context, cs kubernetes.Interface, w *corev1.Service) (LoadBalancer, error) {
	lb := LoadBalancer{Service: w.Name}
	lb.Hostnames = clusters.ExternalHostnames(w.Annotations)
	s, err := cs.CoreV1().Services(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
	if err != nil {
		return lb, fmt.Errorf("read service %s/%s: %w", w.Namespace, w.Name, err)
	}
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			lb.Addresses = append(lb.Addresses, in.IP)
		} else if in.Hostname != "" {
			lb.Addresses = append(lb.Addresses, in.Hostname)
		}
	}
	return lb, nil
}
