package deploy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
)

// Deployer deploys one topology's fixtures and keeps the clients, the
// current cell and the auth token between calls. It is safe for concurrent
// use by scenarios, but Apply and Switch must not overlap.
type Deployer struct {
	opts Options

	mu      sync.Mutex
	clients map[string]kubernetes.Interface

	// tokenMu guards token, fixed once by resolveToken and read-only after.
	tokenMu sync.Mutex
	token   string
}

// Apply deploys the cell of opts to every cluster and waits until it is
// ready (see Deployer.Apply). It is idempotent.
func Apply(ctx context.Context, opts Options) (*Result, error) {
	d, err := New(opts)
	if err != nil {
		return nil, err
	}
	return d.Apply(ctx)
}

// New checks opts and returns a Deployer; it contacts no cluster.
func New(opts Options) (*Deployer, error) {
	if err := opts.fill(false); err != nil {
		return nil, err
	}
	return &Deployer{opts: opts, clients: map[string]kubernetes.Interface{}}, nil
}

// Cell is the cell the Deployer deploys.
func (d *Deployer) Cell() matrix.Cell { return d.opts.Cell }

// Client returns the clientset of a cluster of the topology.
func (d *Deployer) Client(cluster string) (kubernetes.Interface, error) { return d.client(cluster) }

func (d *Deployer) client(cluster string) (kubernetes.Interface, error) {
	if _, ok := d.opts.Topology.Cluster(cluster); !ok {
		return nil, fmt.Errorf("cluster %q is not in topology %q", cluster, d.opts.Topology.Name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cs := d.clients[cluster]; cs != nil {
		return cs, nil
	}
	cs, err := d.opts.client(cluster)
	if err != nil {
		return nil, err
	}
	d.clients[cluster] = cs
	return cs, nil
}

// Switch makes cell the Deployer's cell and applies it: only what differs
// from the running deployment changes (a trust change rolls Pylon; a
// workload change replaces the Stargate workload).
func (d *Deployer) Switch(ctx context.Context, cell matrix.Cell) (*Result, error) {
	cell = cell.Normalize()
	if err := cell.Validate(); err != nil {
		return nil, fmt.Errorf("deploy: cell: %w", err)
	}
	d.opts.Cell = cell
	return d.Apply(ctx)
}

// Apply renders the current cell for every cluster, server-side-applies
// the objects (deleting managed workloads that the cell no longer has, such
// as the other Stargate kind), and waits until every workload is ready and
// every load balancer has an address, within Options.Timeout. Clusters are
// handled in parallel.
func (d *Deployer) Apply(ctx context.Context) (*Result, error) {
	start := time.Now()
	log := d.opts.Logger.With("cell", d.opts.Cell.Name())
	if err := d.resolveToken(ctx); err != nil {
		return nil, err
	}
	plans := make([]plan, len(d.opts.Topology.Clusters))
	for i, c := range d.opts.Topology.Clusters {
		p, err := d.plan(c)
		if err != nil {
			return nil, err
		}
		plans[i] = p
	}
	wctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.applyPlan(wctx, plans[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("deploy cell %s: %w", d.opts.Cell.Name(), err)
	}
	res, err := d.result(ctx, plans)
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	log.Info("deployed", "clusters", len(plans), "elapsed", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// plan is what one cluster gets.
type plan struct {
	cluster topology.Cluster
	values  manifests.Values
	objects []manifests.Object
}

func (d *Deployer) plan(c topology.Cluster) (plan, error) {
	v, err := d.values(c)
	if err != nil {
		return plan{}, err
	}
	objs, err := manifests.Render(v)
	if err != nil {
		return plan{}, err
	}
	extra, err := d.pkiObjects(c)
	if err != nil {
		return plan{}, err
	}
	extra = append(extra, d.authSecret(manifests.AuthSecret, d.token))
	// The namespace first, then PKI and token, then the rest in render order.
	out := append([]manifests.Object{objs[0]}, extra...)
	out = append(out, objs[1:]...)
	return plan{cluster: c, values: v, objects: out}, nil
}

func (d *Deployer) applyPlan(ctx context.Context, p plan) error {
	start := time.Now()
	cs, err := d.client(p.cluster.Name)
	if err != nil {
		return err
	}
	if err := d.applyObjects(ctx, cs, p); err != nil {
		return fmt.Errorf("cluster %q: %w", p.cluster.Name, err)
	}
	var watch RefusalWatch
	if d.opts.BaseRefusals != nil {
		watch = d.opts.BaseRefusals()
	}
	if err := waitReady(ctx, cs, p.objects, watch); err != nil {
		return fmt.Errorf("cluster %q: %w", p.cluster.Name, err)
	}
	d.opts.Logger.Info("cluster ready", "cluster", p.cluster.Name, "cell", d.opts.Cell.Name(), "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// applyObjects applies the namespace, deletes the managed workloads the
// plan no longer has (the other Stargate kind after a workload switch),
// then applies the rest in order.
func (d *Deployer) applyObjects(ctx context.Context, cs kubernetes.Interface, p plan) error {
	want := map[workloadKey]bool{}
	for _, o := range p.objects {
		switch o.(type) {
		case *appsv1.Deployment:
			want[workloadKey{matrix.KindDeployment, o.GetName()}] = true
		case *appsv1.StatefulSet:
			want[workloadKey{matrix.KindStatefulSet, o.GetName()}] = true
		}
	}
	if err := apply(ctx, cs, p.objects[0]); err != nil {
		return err
	}
	have, err := managedWorkloads(ctx, cs, d.opts.Namespace)
	if err != nil {
		return err
	}
	for _, k := range have {
		if !want[k] {
			d.opts.Logger.Info("deleting a workload the cell no longer has", "cluster", p.cluster.Name, "kind", k.Kind, "name", k.Name)
			if err := deleteWorkload(ctx, cs, d.opts.Namespace, k); err != nil {
				return err
			}
		}
	}
	for _, o := range p.objects[1:] {
		if err := apply(ctx, cs, o); err != nil {
			return err
		}
	}
	return nil
}

// RenderYAML renders the manifests of every cluster of opts.Topology for
// opts.Cell as YAML streams keyed by cluster name, the way a user would
// `kubectl apply -f` them. PKI Secrets and ConfigMaps and the auth token
// Secret are not included (package pki writes its objects as YAML; the
// token Secret is named manifests.AuthSecret, key manifests.AuthTokenKey).
func RenderYAML(opts Options) (map[string][]byte, error) {
	if err := opts.fill(true); err != nil {
		return nil, err
	}
	d := &Deployer{opts: opts}
	out := map[string][]byte{}
	for _, c := range opts.Topology.Clusters {
		v, err := d.values(c)
		if err != nil {
			return nil, err
		}
		data, err := manifests.RenderYAML(v)
		if err != nil {
			return nil, err
		}
		out[c.Name] = data
	}
	return out, nil
}
