// Package existing is the provider for clusters the harness did not build:
// each topology cluster is a context of the user's kubeconfig. Up checks
// that every context answers and writes the environment's own kubeconfig
// (one context per topology cluster, named after it, copied from the
// user's); Down deletes exactly the namespaces the harness's deployer made
// there (labelled managed-by nvcf-harness, and absent when Up first ran).
// Nothing else on the clusters is touched.
//
// The provider knows nothing of the clusters' networks, so faults that need
// a network seam (paths, partitions, DNS interception) are skipped with
// their reason; API faults (pod deletes, scaling, certificate rotation)
// work. Load balancers are whatever the clusters give Services of type
// LoadBalancer; external names resolve through Options.DNS, or the host's
// resolver when it is not set.
package existing

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nvcf/conformance/clusters"
)

// ManagedBy is the label (app.kubernetes.io/managed-by) that the harness's
// deployer puts on every namespace it makes.
const ManagedBy = "nvcf-harness"

// Options configure the provider.
type Options struct {
	// Kubeconfig is the user's kubeconfig (default: $KUBECONFIG, else
	// ~/.kube/config).
	Kubeconfig string
	// Contexts maps topology cluster names to kubeconfig contexts; a
	// cluster not named here uses the topology's context for it, else the
	// context of its own name.
	Contexts map[string]string
	// DNS answers the external hostnames of the clusters' load balancers
	// for the harness's probes (zero: the host's resolver).
	DNS netip.AddrPort
	// StateRoot holds one folder per environment (default
	// clusters.StateHome()/existing).
	StateRoot string
	// Timeout bounds reaching each API server and Down's wait for the
	// namespaces to go (default 2 min).
	Timeout time.Duration
}

// state is what Up records for Status and Down.
type state struct {
	Spec        clusters.Spec         `json:"spec"`
	Environment clusters.Environment  `json:"environment"`
	Preexisting map[string][]string   `json:"preexisting"` // cluster → harness-labelled namespaces that were there before
	Sources     map[string]sourceInfo `json:"sources"`
}

type sourceInfo struct {
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context"`
}

type provider struct{ o Options }

var _ clusters.Provider = (*provider)(nil)

// New returns the provider for existing clusters.
func New(o Options) clusters.Provider {
	if o.Kubeconfig == "" {
		o.Kubeconfig = os.Getenv("KUBECONFIG")
	}
	if o.Kubeconfig == "" {
		home, _ := os.UserHomeDir()
		o.Kubeconfig = filepath.Join(home, ".kube", "config")
	}
	if o.StateRoot == "" {
		o.StateRoot = StateRoot()
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	return &provider{o: o}
}

// StateRoot is the default Options.StateRoot: clusters.StateHome()/existing,
// apart from the embedded provider's environments of the same names. A
// run on existing clusters keeps its PKI and fault journal in the
// environment's folder there too.
func StateRoot() string { return filepath.Join(clusters.StateHome(), "existing") }

func (p *provider) dir(name string) string { return filepath.Join(p.o.StateRoot, name) }

// Up checks every context and writes the environment's kubeconfig. It
// creates nothing on the clusters.
func (p *provider) Up(ctx context.Context, spec clusters.Spec, opts ...clusters.UpOption) (*clusters.Environment, error) {
	uo := clusters.ApplyUpOptions(opts...)
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if old, err := p.load(spec.Name); err == nil {
		if d := old.Spec.Diff(spec); len(d) > 0 && !uo.Recreate {
			return nil, fmt.Errorf("environment %q is recorded with another topology (%v): run `harness down --provider existing` first, or pass --recreate", spec.Name, d)
		}
	}
	user, err := clientcmd.LoadFromFile(p.o.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w (pass --kubeconfig, or set KUBECONFIG)", p.o.Kubeconfig, err)
	}
	out := clientcmdapi.NewConfig()
	st := state{Spec: spec, Preexisting: map[string][]string{}, Sources: map[string]sourceInfo{}}
	env := clusters.Environment{Name: spec.Name, Kubeconfig: filepath.Join(p.dir(spec.Name), "kubeconfig"), DNS: p.o.DNS}
	for _, c := range spec.Clusters {
		ctxName := c.Name
		if c.Context != "" {
			ctxName = c.Context
		}
		if n, ok := p.o.Contexts[c.Name]; ok {
			ctxName = n
		}
		kc, ok := user.Contexts[ctxName]
		if !ok {
			return nil, fmt.Errorf("cluster %q: kubeconfig %s has no context %q; name one with --context %s=CONTEXT", c.Name, p.o.Kubeconfig, ctxName, c.Name)
		}
		cl, ok := user.Clusters[kc.Cluster]
		if !ok {
			return nil, fmt.Errorf("cluster %q: context %q names cluster %q, which kubeconfig %s lacks", c.Name, ctxName, kc.Cluster, p.o.Kubeconfig)
		}
		ai, ok := user.AuthInfos[kc.AuthInfo]
		if !ok {
			return nil, fmt.Errorf("cluster %q: context %q names user %q, which kubeconfig %s lacks", c.Name, ctxName, kc.AuthInfo, p.o.Kubeconfig)
		}
		// Named after the topology cluster: scenarios and faults address
		// a cluster's context by its name.
		out.Clusters[c.Name] = cl.DeepCopy()
		out.AuthInfos[c.Name] = ai.DeepCopy()
		nc := kc.DeepCopy()
		nc.Cluster, nc.AuthInfo = c.Name, c.Name
		out.Contexts[c.Name] = nc
		st.Sources[c.Name] = sourceInfo{Kubeconfig: p.o.Kubeconfig, Context: ctxName}
		env.Clusters = append(env.Clusters, clusters.ClusterInfo{Name: c.Name, Context: c.Name, APIServer: cl.Server})
	}
	out.CurrentContext = spec.Clusters[0].Name
	if err := os.MkdirAll(p.dir(spec.Name), 0o700); err != nil {
		return nil, err
	}
	if err := clientcmd.WriteToFile(*out, env.Kubeconfig); err != nil {
		return nil, fmt.Errorf("write the environment's kubeconfig: %w", err)
	}
	if err := os.Chmod(env.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	for i, c := range env.Clusters {
		fmt.Fprintf(uo.Progress, "cluster %s: context %q of %s\n", c.Name, st.Sources[c.Name].Context, p.o.Kubeconfig)
		nodes, pre, err := p.inspect(ctx, env.Kubeconfig, c.Name)
		if err != nil {
			return nil, fmt.Errorf("cluster %q (context %q): %w", c.Name, st.Sources[c.Name].Context, err)
		}
		env.Clusters[i].Nodes = nodes
		st.Preexisting[c.Name] = pre
		if old, err := p.load(spec.Name); err == nil {
			// A second Up keeps the first one's record of what was there.
			st.Preexisting[c.Name] = old.Preexisting[c.Name]
		}
	}
	st.Environment = env
	if err := p.save(st); err != nil {
		return nil, err
	}
	return &env, nil
}

// inspect reaches the API server and lists the nodes and the namespaces
// that carry the harness's label already.
func (p *provider) inspect(ctx context.Context, kubeconfig, kctx string) (nodes, harnessNamespaces []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	cs, err := clusters.Client(kubeconfig, kctx)
	if err != nil {
		return nil, nil, err
	}
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nl.Items {
		nodes = append(nodes, n.Name)
	}
	nsl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + ManagedBy})
	if err != nil {
		return nil, nil, fmt.Errorf("list namespaces: %w", err)
	}
	for _, n := range nsl.Items {
		harnessNamespaces = append(harnessNamespaces, n.Name)
	}
	return nodes, harnessNamespaces, nil
}

// Status returns the recorded environment, after checking that each
// cluster answers.
func (p *provider) Status(ctx context.Context, name string) (*clusters.Environment, error) {
	st, err := p.load(name)
	if err != nil {
		return nil, err
	}
	for _, c := range st.Environment.Clusters {
		if _, _, err := p.inspect(ctx, st.Environment.Kubeconfig, c.Context); err != nil {
			return nil, fmt.Errorf("environment %q cluster %q: %w", name, c.Name, err)
		}
	}
	return &st.Environment, nil
}

// Down deletes the harness-labelled namespaces that were not there when Up
// first ran, waits for them to go, and forgets the environment.
func (p *provider) Down(ctx context.Context, name string) error {
	st, err := p.load(name)
	if errors.Is(err, clusters.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	var errs []error
	for _, c := range st.Environment.Clusters {
		errs = append(errs, p.deleteOurs(ctx, st.Environment.Kubeconfig, c.Context, st.Preexisting[c.Name]))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("environment %q: %w", name, err)
	}
	return os.RemoveAll(p.dir(name))
}

func (p *provider) deleteOurs(ctx context.Context, kubeconfig, context string, keep []string) error {
	cs, err := clusters.Client(kubeconfig, context)
	if err != nil {
		return err
	}
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=" + ManagedBy}
	nsl, err := cs.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("cluster %s: list namespaces: %w", context, err)
	}
	var ours []string
	for _, n := range nsl.Items {
		if slices.Contains(keep, n.Name) {
			continue
		}
		ours = append(ours, n.Name)
		if err := cs.CoreV1().Namespaces().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster %s: delete namespace %s: %w", context, n.Name, err)
		}
	}
	for _, n := range ours {
		for {
			_, err := cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("cluster %s: namespace %s still terminating: %w", context, n, ctx.Err())
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return nil
}

func (p *provider) load(name string) (*state, error) {
	var st state
	if err := clusters.ReadRecord(p.dir(name), &st); err != nil {
		return nil, fmt.Errorf("environment %q on existing clusters: %w", name, err)
	}
	return &st, nil
}

func (p *provider) save(st state) error { return clusters.WriteRecord(p.dir(st.Spec.Name), st) }

// Names lists the environments recorded under o.StateRoot.
func Names(o Options) ([]string, error) {
	return clusters.RecordedNames(New(o).(*provider).o.StateRoot)
}
