package main

import (
	"flag"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/existing"
	"github.com/nvcf/conformance/clusters/kind"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/images"
	"github.com/nvcf/conformance/deploy/manifests"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/topologies"
)

// The providers --provider names.
const (
	providerEmbedded = "embedded"
	providerExisting = "existing"
	providerKind     = "kind"
)

// providerFlags are the flags that pick and configure the provider, the
// same on up, run, status and down.
type providerFlags struct {
	name       string
	kubeconfig string
	contexts   contextMap
	dns        string
}

func (f *providerFlags) register(fs *flag.FlagSet) {
	f.contexts = contextMap{}
	fs.StringVar(&f.name, "provider", providerEmbedded, "where the clusters come from: embedded (built here, the default), existing (kubeconfig contexts) or kind (kind clusters in Docker from a node image built here, as root)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "existing: the kubeconfig holding the clusters' contexts (default $KUBECONFIG, else ~/.kube/config)")
	fs.Var(f.contexts, "context", "existing: `CLUSTER=CONTEXT`, the context of a topology cluster (default: the topology's context, else the cluster's name); comma-separated or repeated")
	fs.StringVar(&f.dns, "dns", "", "existing: `ADDR:PORT` of a DNS server answering the load balancers' external names for the probes (default: the host's resolver)")
}

// check rejects an unknown provider and flags that the chosen one ignores.
func (f *providerFlags) check() error {
	switch f.name {
	case providerEmbedded, providerKind:
		if f.kubeconfig != "" || len(f.contexts) > 0 || f.dns != "" {
			return fmt.Errorf("--kubeconfig, --context and --dns are for --provider existing; the %s provider makes its own", f.name)
		}
	case providerExisting:
	default:
		return fmt.Errorf("--provider %q: want embedded, existing or kind", f.name)
	}
	return nil
}

// preflight runs the chosen provider's checks before anything long starts;
// disks are further folders that need free space (the artifacts, say).
func (f *providerFlags) preflight(spec *clusters.Spec, disks ...local.Disk) error {
	switch f.name {
	case providerEmbedded:
		return local.Preflight(local.Options{}, spec, disks...)
	case providerKind:
		// Docker, the host's routes and load-balancer addresses, and the
		// external DNS on port 53 all want root.
		if os.Geteuid() != 0 {
			return fmt.Errorf("--provider kind needs root (it starts or uses the Docker daemon, routes the clusters' pods and services on this host and serves their load balancers and DNS): run it with sudo")
		}
	}
	return nil
}

// provider builds the chosen provider; images are the embedded provider's
// image → binary mappings.
func (f *providerFlags) provider(images map[string]string) (clusters.Provider, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	if f.name == providerKind {
		bin, err := harnessrun.BinDir()
		if err != nil {
			return nil, err
		}
		return kind.New(kind.Options{BinDir: bin, Archives: referenceArchives}), nil
	}
	if f.name == providerExisting {
		o := existing.Options{Kubeconfig: f.kubeconfig, Contexts: f.contexts}
		if f.dns != "" {
			a, err := netip.ParseAddrPort(f.dns)
			if err != nil {
				return nil, fmt.Errorf("--dns %q: want ADDR:PORT, e.g. 127.0.0.88:53: %w", f.dns, err)
			}
			o.DNS = a
		}
		return existing.New(o), nil
	}
	return embeddedProvider(images)
}

// args are the flags as given, for the commands a run suggests (a case's
// repro, bringing kept clusters down); none for the embedded provider.
func (f *providerFlags) args() []string {
	if f.name == providerEmbedded {
		return nil
	}
	a := []string{"--provider", f.name}
	if f.kubeconfig != "" {
		a = append(a, "--kubeconfig", f.kubeconfig)
	}
	if len(f.contexts) > 0 {
		var kv []string
		for _, c := range slices.Sorted(maps.Keys(f.contexts)) {
			kv = append(kv, c+"="+f.contexts[c])
		}
		a = append(a, "--context", strings.Join(kv, ","))
	}
	if f.dns != "" {
		a = append(a, "--dns", f.dns)
	}
	return a
}

// stateDir is environment name's state folder on the chosen provider:
// where a run mints its PKI and journals its faults.
func (f *providerFlags) stateDir(name string) string {
	switch f.name {
	case providerExisting:
		return filepath.Join(existing.StateRoot(), name)
	case providerKind:
		return filepath.Join(kind.StateRoot(), name)
	}
	return filepath.Join(clusters.StateHome(), name)
}

// names resolves --topology/--name to environment names; with neither,
// every environment the chosen provider has state for.
func (f *providerFlags) names(topo, name string) ([]string, error) {
	switch {
	case name != "":
		return []string{name}, nil
	case topo != "":
		t, err := topologies.Load(topo)
		if err != nil {
			return nil, err
		}
		// With the environments a run of it brought up beside the first.
		all, err := f.names("", "")
		if err != nil {
			return nil, err
		}
		names := []string{t.Name}
		for _, n := range all {
			if n != t.Name && harnessrun.IsEnvironmentOf(t.Name, n) {
				names = append(names, n)
			}
		}
		return names, nil
	}
	switch f.name {
	case providerExisting:
		return existing.Names(existing.Options{})
	case providerKind:
		return kind.Names(kind.Options{})
	}
	return local.Names(local.Options{})
}

// contextMap collects --context CLUSTER=CONTEXT[,…].
type contextMap map[string]string

func (m contextMap) String() string { return fmt.Sprint(map[string]string(m)) }

func (m contextMap) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		c, k, ok := strings.Cut(kv, "=")
		if !ok || c == "" || k == "" {
			return fmt.Errorf("%q is not CLUSTER=CONTEXT", kv)
		}
		m[c] = k
	}
	return nil
}

// referenceArchives builds the kind nodes' image archive of the reference
// components: the nvcf-ref beside this executable, tagged as the manifests
// name it (manifests.DefaultImage), in the kind provider's state folder.
// The user's --images need no archive: they name images the nodes pull.
func referenceArchives() ([]string, error) {
	dir, err := harnessrun.BinDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(kind.StateRoot(), "images", "nvcf-ref.tar")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := images.Archive(filepath.Join(dir, harnessrun.ReferenceBinary), path, manifests.DefaultImage); err != nil {
		return nil, err
	}
	return []string{path}, nil
}
