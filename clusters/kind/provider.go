// Package kind is the provider that runs each topology cluster as a kind
// cluster (sigs.k8s.io/kind's cluster library) in Docker, from a node image
// built here offline (BuildNodeImage): no registry is needed.
//
// All clusters of an environment are created in parallel on one Docker
// network inside the test range, each with a /22 of pods and a /24 of
// services from 198.19.192.0/18. kind's default CNI is off; the provider
// gives each node a bridge with its pod CIDR and routes every node's pods
// through that node on the others. A cluster whose kind configuration and
// node image hash match what Up recorded is reused.
//
// The host serves every cluster as the embedded provider does its own: a
// detached process (Serve) runs the load-balancer controller of each
// cluster (addresses from podnet.LBPrefix(i) on the host's lo, forwarded to
// the Services' NodePorts on the nodes) and the external DNS on its own
// address on lo (ExternalDNS), where each cluster's CoreDNS forwards the
// topology's domain. Host routes reach the pods and services, so replies
// and the harness's probes find them, and the network faults act on the
// host as on the embedded provider's: pod traffic to another cluster's
// load balancers crosses it. Images built here (the reference components)
// are imported into every node's containerd.
//
// Up uses the Docker daemon that answers ($DOCKER_HOST, else
// /var/run/docker.sock); when none does it says so and starts one through
// clusters/dockerd, detached, which Down stops (restoring the host's
// firewall) once no container is left.
package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local"
)

// errEmbeddedUp refuses a kind bring-up beside an embedded environment.
var errEmbeddedUp = errors.New("an embedded environment is up: its nftables guard (table inet nvcf_harness) drops test-range traffic on every other interface, the kind nodes' network included; bring it down first (harness down); the two providers do not run at once yet")

// Options configure the provider.
type Options struct {
	// StateRoot holds one folder per environment and the Docker daemon the
	// provider starts (default clusters.StateHome()/kind).
	StateRoot string
	// CacheDir is the cache root, where the node image is built (default
	// clusters.CacheHome()).
	CacheDir string
	// DockerData is the data root of a daemon the provider starts, kept
	// between daemons so that the node image is loaded once (default
	// CacheDir/docker).
	DockerData string
	// BinDir holds nvcf-pause and nvcf-runc (the node image's inputs and
	// Docker's runtime shim); make build puts them in bin/.
	BinDir string
	// Timeout bounds one cluster's readiness after kind created it
	// (default 5 min).
	Timeout time.Duration
	// Archives returns the image archives Up imports into every node (the
	// reference components' image); nil imports none.
	Archives func() ([]string, error)
	// ServeCommand runs Serve for the environment folder appended to it
	// (default: this executable's `kind serve --state`); tests name
	// their own binary.
	ServeCommand []string
}

type provider struct{ o Options }

var _ clusters.Provider = (*provider)(nil)

// New returns the kind provider.
func New(o Options) clusters.Provider {
	if o.StateRoot == "" {
		o.StateRoot = StateRoot()
	}
	if o.CacheDir == "" {
		o.CacheDir = clusters.CacheHome()
	}
	if o.DockerData == "" {
		o.DockerData = filepath.Join(o.CacheDir, "docker")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	return &provider{o: o}
}

// StateRoot is the default Options.StateRoot.
func StateRoot() string { return filepath.Join(clusters.StateHome(), "kind") }

// state is what Up records for Status and Down.
type state struct {
	Spec        clusters.Spec        `json:"spec"`
	Environment clusters.Environment `json:"environment"`
	// Hashes are the config hashes of the kind clusters, by topology
	// cluster.
	Hashes map[string]string `json:"hashes"`
	Image  string            `json:"image"`
	// Routes are the host routes Up added into the clusters.
	Routes []route `json:"routes,omitempty"`
	// ServePID is the process serving the load balancers and external DNS.
	ServePID int `json:"servePID,omitempty"`
	// MadeModulesDir says that modulesDir did not exist before Up: kind
	// mounts it into every node, and Docker creates a missing source.
	MadeModulesDir bool `json:"madeModulesDir,omitempty"`
}

// modulesDir is the host folder kind mounts into its nodes.
var modulesDir = "/lib/modules"

// removeModulesDir removes modulesDir when Up's clusters made it and it is
// still empty; one that something filled since is no longer only ours.
func removeModulesDir() error {
	err := os.Remove(modulesDir)
	if err == nil || errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return nil
	}
	return fmt.Errorf("remove %s, which the kind nodes' mount made: %w", modulesDir, err)
}

func (p *provider) dir(name string) string { return filepath.Join(p.o.StateRoot, name) }

func (p *provider) clusterKubeconfig(env, c string) string {
	return filepath.Join(p.dir(env), "kind-"+c+".kubeconfig")
}

// lock serialises the provider's commands on one environment across
// processes.
func (p *provider) lock(name string) (func(), error) {
	if err := os.MkdirAll(p.o.StateRoot, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(p.o.StateRoot, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// Up creates the kind clusters of spec in parallel, or reuses the ones
// whose configuration hash matches, and waits until every node is Ready and
// CoreDNS is available in each.
func (p *provider) Up(ctx context.Context, spec clusters.Spec, opts ...clusters.UpOption) (*clusters.Environment, error) {
	uo := clusters.ApplyUpOptions(opts...)
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(spec.Clusters) > MaxClusters {
		return nil, fmt.Errorf("%w: %d clusters; the kind provider's address plan holds %d", clusters.ErrInvalidSpec, len(spec.Clusters), MaxClusters)
	}
	unlock, err := p.lock(spec.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, _ := p.load(spec.Name)
	if old != nil {
		if d := old.Spec.Diff(spec); len(d) > 0 && !uo.Recreate {
			return nil, fmt.Errorf("environment %q runs on kind with another topology (%v): run `harness down --provider kind` first, or pass --recreate", spec.Name, d)
		}
	}
	if local.GuardActive(ctx) {
		return nil, errEmbeddedUp
	}
	if other := p.otherServing(spec.Name); other != "" {
		return nil, fmt.Errorf("kind environment %q is up and serves the load-balancer ranges and the external DNS this one needs: bring it down first (harness down --provider kind --name %s)", other, other)
	}
	img, err := BuildNodeImage(ctx, ImageOptions{CacheDir: p.o.CacheDir, BinDir: p.o.BinDir, Progress: uo.Progress})
	if err != nil {
		return nil, err
	}
	st := state{Spec: spec, Hashes: map[string]string{}, Image: img.Ref}
	env := clusters.Environment{Name: spec.Name, Kubeconfig: filepath.Join(p.dir(spec.Name), "kubeconfig"), Clusters: make([]clusters.ClusterInfo, len(spec.Clusters))}
	// Recorded before a daemon starts or anything is created, so that a
	// down after a failed or killed up finds what there is to remove; the
	// hashes of reused clusters carry over.
	if old != nil {
		for k, v := range old.Hashes {
			st.Hashes[k] = v
		}
		st.Spec.Clusters = append(st.Spec.Clusters, dropped(old.Spec, spec)...)
		st.Routes, st.ServePID, st.MadeModulesDir = old.Routes, old.ServePID, old.MadeModulesDir
	}
	if _, err := os.Stat(modulesDir); errors.Is(err, os.ErrNotExist) {
		st.MadeModulesDir = true
	}
	if err := os.MkdirAll(p.dir(spec.Name), 0o700); err != nil {
		return nil, err
	}
	if err := p.save(st); err != nil {
		return nil, err
	}
	st.Spec = spec
	host, err := p.ensureDocker(ctx, uo.Progress)
	if err != nil {
		return nil, err
	}
	// kind's library runs the docker CLI with this process's environment.
	os.Setenv("DOCKER_HOST", host)
	os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", NetworkName)
	if err := ensureNetwork(ctx, host); err != nil {
		return nil, err
	}
	if err := loadImage(ctx, host, img, uo.Progress); err != nil {
		return nil, err
	}
	kp := newKindProvider(uo.Progress)
	running, err := kp.List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	if old != nil {
		// --recreate with fewer clusters: the ones the topology lost go.
		for _, c := range dropped(old.Spec, spec) {
			fmt.Fprintf(uo.Progress, "cluster %s: no longer in the topology; deleting kind cluster %s\n", c.Name, kindName(spec.Name, c.Name))
			if err := kp.Delete(kindName(spec.Name, c.Name), p.clusterKubeconfig(spec.Name, c.Name)); err != nil {
				return nil, fmt.Errorf("delete kind cluster %s: %w", kindName(spec.Name, c.Name), err)
			}
		}
	}
	var archives []string
	if p.o.Archives != nil {
		if archives, err = p.o.Archives(); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	errs := make([]error, len(spec.Clusters))
	var wg sync.WaitGroup
	for i, c := range spec.Clusters {
		wg.Go(func() {
			// One kind provider per goroutine: kind's Docker provider caches
			// what it learns of the daemon without a lock.
			info, hash, err := p.upCluster(ctx, newKindProvider(uo.Progress), host, spec, i, img, old, slices.Contains(running, kindName(spec.Name, c.Name)), uo)
			if err == nil {
				mu.Lock()
				env.Clusters[i], st.Hashes[c.Name] = info, hash
				mu.Unlock()
				err = p.serveCluster(ctx, host, spec, info, archives, &st, &mu, uo)
			}
			if err != nil {
				errs[i] = fmt.Errorf("cluster %s: %w", c.Name, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// What came up stays recorded, so that down removes it.
		st.Environment = env
		_ = p.save(st)
		return nil, err
	}
	if err := p.writeKubeconfig(env); err != nil {
		return nil, err
	}
	env.DNS = ExternalDNS
	st.Environment = env
	if err := p.save(st); err != nil {
		return nil, err
	}
	pid, err := p.startServe(ctx, p.dir(spec.Name), st.ServePID)
	if err != nil {
		return nil, err
	}
	st.ServePID = pid
	if err := p.save(st); err != nil {
		return nil, err
	}
	fmt.Fprintf(uo.Progress, "kind: load balancers and external DNS (%s) served by pid %d\n", ExternalDNS, pid)
	return &env, nil
}

// serveCluster readies a cluster for the matrix: its CoreDNS forwards the
// topology's domain to the external DNS, the host routes into it, and the
// image archives are in every node.
func (p *provider) serveCluster(ctx context.Context, host string, spec clusters.Spec, info clusters.ClusterInfo, archives []string, st *state, mu *sync.Mutex, uo clusters.UpOptions) error {
	cs, _, err := clientFor(p.clusterKubeconfig(spec.Name, info.Name))
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	if err := configureDNS(rctx, cs, spec.Domain); err != nil {
		return err
	}
	nl, err := cs.CoreV1().Nodes().List(rctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	rs, err := hostRoutes(nl.Items, info.Network.Services)
	if err != nil {
		return err
	}
	// Recorded first, so that a down after a failed or killed up removes
	// them.
	mu.Lock()
	st.Routes = append(slices.DeleteFunc(st.Routes, func(r route) bool { return slices.Contains(rs, r) }), rs...)
	err = p.save(*st)
	mu.Unlock()
	if err != nil {
		return err
	}
	if err := addRoutes(rctx, rs); err != nil {
		return err
	}
	for _, a := range archives {
		for _, node := range info.Nodes {
			if err := importInto(rctx, host, node, a); err != nil {
				return err
			}
		}
		fmt.Fprintf(uo.Progress, "cluster %s: imported %s into %d nodes\n", info.Name, filepath.Base(a), len(info.Nodes))
	}
	return nil
}

// otherServing names another kind environment whose serving process runs,
// or "".
func (p *provider) otherServing(name string) string {
	names, _ := clusters.RecordedNames(p.o.StateRoot)
	for _, n := range names {
		if n == name {
			continue
		}
		if st, err := p.load(n); err == nil && isServe(st.ServePID, p.dir(n)) {
			return n
		}
	}
	return ""
}

// dropped are the clusters of old that want lacks.
func dropped(old, want clusters.Spec) []clusters.ClusterSpec {
	var d []clusters.ClusterSpec
	for _, c := range old.Clusters {
		if !slices.ContainsFunc(want.Clusters, func(w clusters.ClusterSpec) bool { return w.Name == c.Name }) {
			d = append(d, c)
		}
	}
	return d
}

// newKindProvider is kind's library on Docker, logging to w.
func newKindProvider(w io.Writer) *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(newLogger(w)))
}

// upCluster creates (or reuses) one kind cluster and readies it.
func (p *provider) upCluster(ctx context.Context, kp *cluster.Provider, host string, spec clusters.Spec, i int, img *NodeImage, old *state, exists bool, uo clusters.UpOptions) (clusters.ClusterInfo, string, error) {
	c := spec.Clusters[i]
	name := kindName(spec.Name, c.Name)
	cfg, err := kindConfig(spec, i)
	if err != nil {
		return clusters.ClusterInfo{}, "", err
	}
	hash, err := configHash(cfg, img.Ref)
	if err != nil {
		return clusters.ClusterInfo{}, "", err
	}
	kcPath := p.clusterKubeconfig(spec.Name, c.Name)
	start := time.Now()
	reused := false
	if exists {
		switch {
		case old == nil || old.Hashes[c.Name] == "":
			// No record of it: an up that was killed before it finished,
			// or state that was removed. The name is this environment's.
			fmt.Fprintf(uo.Progress, "cluster %s: kind cluster %s has no record (an earlier up did not finish); replacing it\n", c.Name, name)
			if err := kp.Delete(name, kcPath); err != nil {
				return clusters.ClusterInfo{}, "", fmt.Errorf("delete kind cluster %s: %w", name, err)
			}
		case old.Hashes[c.Name] == hash:
			reused = true
			fmt.Fprintf(uo.Progress, "cluster %s: reusing kind cluster %s (config hash %s)\n", c.Name, name, hash)
		case uo.Recreate:
			fmt.Fprintf(uo.Progress, "cluster %s: kind cluster %s differs (config hash now %s); deleting it (--recreate)\n", c.Name, name, hash)
			if err := kp.Delete(name, kcPath); err != nil {
				return clusters.ClusterInfo{}, "", fmt.Errorf("delete kind cluster %s: %w", name, err)
			}
		default:
			return clusters.ClusterInfo{}, "", fmt.Errorf("kind cluster %s runs with another configuration or node image (config hash now %s): run `harness down --provider kind` first, or pass --recreate", name, hash)
		}
	}
	if !reused {
		fmt.Fprintf(uo.Progress, "cluster %s: creating kind cluster %s (1 control-plane node, %d workers, pods %s, services %s)…\n",
			c.Name, name, c.Nodes-1, cfg.Networking.PodSubnet, cfg.Networking.ServiceSubnet)
		err := kp.Create(name,
			cluster.CreateWithV1Alpha4Config(cfg),
			cluster.CreateWithNodeImage(img.Ref),
			cluster.CreateWithWaitForReady(0),
			cluster.CreateWithKubeconfigPath(kcPath),
			cluster.CreateWithRetain(true), // for its logs; deleted below
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false))
		if err != nil {
			logs := p.collectLogs(kp, spec.Name, c.Name)
			_ = kp.Delete(name, kcPath)
			return clusters.ClusterInfo{}, "", fmt.Errorf("kind create %s: %w (the nodes' logs: %s)", name, err, logs)
		}
	}
	if err := kp.ExportKubeConfig(name, kcPath, false); err != nil {
		return clusters.ClusterInfo{}, "", fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	cs, server, err := clientFor(kcPath)
	if err != nil {
		return clusters.ClusterInfo{}, "", err
	}
	kindNodes, err := kp.ListNodes(name)
	if err != nil {
		return clusters.ClusterInfo{}, "", fmt.Errorf("nodes of %s: %w", name, err)
	}
	rctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	nets, err := setupPodNetwork(rctx, cs, kindNodes)
	if err != nil {
		return clusters.ClusterInfo{}, "", fmt.Errorf("%w (the nodes' logs: %s)", err, p.collectLogs(kp, spec.Name, c.Name))
	}
	fmt.Fprintf(uo.Progress, "cluster %s: pod network: a bridge per node, routes between %d nodes\n", c.Name, len(nets))
	nodeNames, err := waitReady(rctx, cs, len(kindNodes))
	if err != nil {
		return clusters.ClusterInfo{}, "", fmt.Errorf("%w (the nodes' logs: %s)", err, p.collectLogs(kp, spec.Name, c.Name))
	}
	var containers []string
	for _, n := range kindNodes {
		containers = append(containers, n.String())
	}
	mem, err := memory(ctx, host, containers)
	if err != nil {
		return clusters.ClusterInfo{}, "", err
	}
	fmt.Fprintf(uo.Progress, "cluster %s: ready in %s (%d nodes Ready, CoreDNS available), %.0f MiB in its node containers\n",
		c.Name, time.Since(start).Round(time.Second), len(nodeNames), float64(mem)/(1<<20))
	pl := planOf(i)
	return clusters.ClusterInfo{
		Name: c.Name, Context: c.Name, APIServer: server, Nodes: nodeNames,
		Network: clusters.Network{
			Pods: pl.Pods, Services: pl.Services,
			// kubeadm gives CoreDNS the services' tenth address.
			DNS:     netip.AddrPortFrom(addrAt(pl.Services, 10), 53),
			Gateway: gatewayAddr(), Bridge: BridgeName,
			LoadBalancers: podnet.LBPrefix(i),
			LookupSeam:    ExternalDNS,
		},
	}, hash, nil
}

// collectLogs saves the nodes' logs (journal, containers, kubelet) of a
// cluster that failed under the environment's folder and returns where.
func (p *provider) collectLogs(kp *cluster.Provider, env, c string) string {
	dir := filepath.Join(p.dir(env), "logs", c)
	if err := kp.CollectLogs(kindName(env, c), dir); err != nil {
		return fmt.Sprintf("%s (incomplete: %v)", dir, err)
	}
	return dir
}

func clientFor(kubeconfig string) (kubernetes.Interface, string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	return cs, cfg.Host, err
}

// waitReady waits until n nodes are Ready and CoreDNS is available, and
// returns the nodes' names.
func waitReady(ctx context.Context, cs kubernetes.Interface, n int) ([]string, error) {
	var last string
	for {
		names, why := readiness(ctx, cs, n)
		if why == "" {
			return names, nil
		}
		last = why
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not ready: %s: %w", last, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// readiness returns the Ready nodes' names, or why the cluster is not ready.
func readiness(ctx context.Context, cs kubernetes.Interface, n int) ([]string, string) {
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err.Error()
	}
	var names, notReady []string
	for _, node := range nl.Items {
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		}
		if !ready {
			notReady = append(notReady, node.Name)
		}
		names = append(names, node.Name)
	}
	switch {
	case len(names) < n:
		return nil, fmt.Sprintf("%d of %d nodes registered", len(names), n)
	case len(notReady) > 0:
		return nil, fmt.Sprintf("nodes %v not Ready", notReady)
	}
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return nil, "CoreDNS: " + err.Error()
	}
	if !available(d) {
		return nil, fmt.Sprintf("CoreDNS %d of %d replicas available", d.Status.AvailableReplicas, d.Status.Replicas)
	}
	slices.Sort(names)
	return names, ""
}

func available(d *appsv1.Deployment) bool {
	return d.Status.Replicas > 0 && d.Status.AvailableReplicas == d.Status.Replicas
}

// writeKubeconfig writes the environment's kubeconfig: each kind cluster's
// context, named after its topology cluster.
func (p *provider) writeKubeconfig(env clusters.Environment) error {
	out := clientcmdapi.NewConfig()
	for _, c := range env.Clusters {
		kc, err := clientcmd.LoadFromFile(p.clusterKubeconfig(env.Name, c.Name))
		if err != nil {
			return err
		}
		kctx, ok := kc.Contexts[kc.CurrentContext]
		if !ok {
			return fmt.Errorf("cluster %s: kubeconfig has no current context", c.Name)
		}
		out.Clusters[c.Name] = kc.Clusters[kctx.Cluster].DeepCopy()
		out.AuthInfos[c.Name] = kc.AuthInfos[kctx.AuthInfo].DeepCopy()
		out.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
	}
	out.CurrentContext = env.Clusters[0].Name
	if err := clientcmd.WriteToFile(*out, env.Kubeconfig); err != nil {
		return err
	}
	return os.Chmod(env.Kubeconfig, 0o600)
}

// Status returns the recorded environment after checking that every
// cluster's API server answers.
func (p *provider) Status(ctx context.Context, name string) (*clusters.Environment, error) {
	st, err := p.load(name)
	if err != nil {
		return nil, err
	}
	host := p.findDocker(ctx)
	if host == "" {
		return nil, fmt.Errorf("environment %q on kind: no Docker daemon answers, so its clusters do not run: `harness down --provider kind` cleans up, `up` brings them back", name)
	}
	if !isServe(st.ServePID, p.dir(name)) {
		return nil, fmt.Errorf("environment %q on kind: the process serving its load balancers and external DNS (pid %d) is gone (see %s): `harness up --provider kind` starts it again", name, st.ServePID, filepath.Join(p.dir(name), serveLog))
	}
	env := st.Environment
	for i, c := range env.Clusters {
		cs, _, err := clientFor(p.clusterKubeconfig(name, c.Name))
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		nodes, why := readiness(cctx, cs, len(c.Nodes))
		cancel()
		if why != "" {
			return nil, fmt.Errorf("environment %q cluster %q: %s", name, c.Name, why)
		}
		env.Clusters[i].Nodes = nodes
	}
	return &env, nil
}

// Down deletes the environment's kind clusters, the nodes' network once
// no node is left on it, the Docker daemon the provider started once no
// container is left, the host's /lib/modules when the nodes' mount made it,
// and the environment's state.
func (p *provider) Down(ctx context.Context, name string) error {
	unlock, err := p.lock(name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := p.load(name)
	if errors.Is(err, clusters.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	// What the host gives the clusters goes first: nothing may forward to
	// nodes that are going.
	errs := []error{stopServe(st.ServePID, p.dir(name))}
	errs = append(errs, releaseAddrs(ctx, len(st.Spec.Clusters)), delRoutes(ctx, st.Routes))
	host := p.findDocker(ctx)
	if host != "" {
		os.Setenv("DOCKER_HOST", host)
		kp := newKindProvider(io.Discard)
		for _, c := range st.Spec.Clusters {
			if err := kp.Delete(kindName(name, c.Name), p.clusterKubeconfig(name, c.Name)); err != nil {
				errs = append(errs, fmt.Errorf("delete kind cluster %s: %w", kindName(name, c.Name), err))
			}
		}
		if errors.Join(errs...) == nil {
			errs = append(errs, removeNetwork(ctx, host))
		}
	}
	if errors.Join(errs...) == nil {
		errs = append(errs, p.stopOwnDaemon(ctx, host))
	}
	if errors.Join(errs...) == nil && st.MadeModulesDir {
		errs = append(errs, removeModulesDir())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("environment %q on kind: %w", name, err)
	}
	return os.RemoveAll(p.dir(name))
}

func (p *provider) load(name string) (*state, error) {
	var st state
	if err := clusters.ReadRecord(p.dir(name), &st); err != nil {
		return nil, fmt.Errorf("environment %q on kind: %w", name, err)
	}
	return &st, nil
}

func (p *provider) save(st state) error { return clusters.WriteRecord(p.dir(st.Spec.Name), st) }

// Names lists the environments recorded under o.StateRoot.
func Names(o Options) ([]string, error) {
	return clusters.RecordedNames(New(o).(*provider).o.StateRoot)
}

// ImportArchive imports the OCI (or Docker) image archive at path into
// containerd on every node of the environment called name, where the
// kubelet finds it (imagePullPolicy Never or IfNotPresent): how images
// built here reach kind clusters without a registry.
func (p *provider) ImportArchive(ctx context.Context, name, path string) error {
	st, err := p.load(name)
	if err != nil {
		return err
	}
	host := p.findDocker(ctx)
	if host == "" {
		return fmt.Errorf("environment %q on kind: no Docker daemon answers", name)
	}
	for _, c := range st.Environment.Clusters {
		for _, node := range c.Nodes {
			if err := importInto(ctx, host, node, path); err != nil {
				return fmt.Errorf("cluster %s: %w", c.Name, err)
			}
		}
	}
	return nil
}

// Importer is the kind provider's image import, for callers that hold it
// as a clusters.Provider.
type Importer interface {
	ImportArchive(ctx context.Context, name, path string) error
}
