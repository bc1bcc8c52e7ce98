package binaries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// NodeSet holds the absolute paths of the binaries of a kubeadm node (the
// kind provider's node image): the node agents and the control plane,
// built from the same k8s.io/kubernetes module as the embedded provider's
// but with the version stamped in (kubeadm compares versions), containerd,
// and the CNI plugins.
type NodeSet struct {
	Kubelet           string `json:"kubelet"`
	Kubeadm           string `json:"kubeadm"`
	KubeProxy         string `json:"kubeProxy"`
	APIServer         string `json:"kubeAPIServer"`
	ControllerManager string `json:"kubeControllerManager"`
	Scheduler         string `json:"kubeScheduler"`
	Kubectl           string `json:"kubectl"`
	// Containerd, Shim (containerd-shim-runc-v2) and Ctr are static.
	Containerd string `json:"containerd"`
	Shim       string `json:"shim"`
	Ctr        string `json:"ctr"`
	// CNI is the folder of the CNI plugins (bridge, host-local, loopback,
	// portmap), all static.
	CNI string `json:"cni"`
}

// CNIPlugins are the plugins built into NodeSet.CNI: a bridge per node
// with host-local addresses from the node's pod CIDR, and port mappings.
var CNIPlugins = []string{"bridge", "host-local", "loopback", "portmap"}

// NodePaths returns where the node binaries of o live, built or not.
func NodePaths(o Options) NodeSet {
	o.defaults()
	k := filepath.Join(k8sNodeDir(o), "bin")
	c := filepath.Join(containerdDir(o), "bin")
	return NodeSet{
		Kubelet:   filepath.Join(k, "kubelet"),
		Kubeadm:   filepath.Join(k, "kubeadm"),
		KubeProxy: filepath.Join(k, "kube-proxy"),
		APIServer: filepath.Join(k, "kube-apiserver"),
		// The rest as the embedded provider names them.
		ControllerManager: filepath.Join(k, "kube-controller-manager"),
		Scheduler:         filepath.Join(k, "kube-scheduler"),
		Kubectl:           filepath.Join(k, "kubectl"),
		Containerd:        filepath.Join(c, "containerd"),
		Shim:              filepath.Join(c, "containerd-shim-runc-v2"),
		Ctr:               filepath.Join(c, "ctr"),
		CNI:               filepath.Join(cniDir(o), "bin"),
	}
}

func k8sNodeDir(o Options) string {
	return filepath.Join(o.CacheDir, "k8s-node-build-"+o.Versions.Kubernetes)
}
func containerdDir(o Options) string {
	return filepath.Join(o.CacheDir, "containerd-"+o.Versions.Containerd)
}
func cniDir(o Options) string { return filepath.Join(o.CacheDir, "cni-plugins-"+o.Versions.CNIPlugins) }

func nodeComponents(o Options) []component {
	s := NodePaths(o)
	v := o.Versions
	var cni []string
	for _, p := range CNIPlugins {
		cni = append(cni, filepath.Join(s.CNI, p))
	}
	return []component{
		{
			name: "kubelet, kubeadm, kube-proxy and the control plane (version-stamped) " + v.Kubernetes,
			dir:  k8sNodeDir(o), bins: []string{s.Kubelet, s.Kubeadm, s.KubeProxy, s.APIServer, s.ControllerManager, s.Scheduler, s.Kubectl},
			estimate: "about 15 min cold on 2 cores; a few minutes of linking when the embedded provider's build is in the Go build cache",
			module:   "k8s.io/kubernetes", version: v.Kubernetes,
			build: buildKubernetesNode,
		},
		{
			name: "containerd " + v.Containerd, dir: containerdDir(o), bins: []string{s.Containerd, s.Shim, s.Ctr},
			estimate: "about 4 min cold", module: "github.com/containerd/containerd/v2", version: v.Containerd,
			build: buildContainerd,
		},
		{
			name: "CNI plugins " + v.CNIPlugins, dir: cniDir(o), bins: cni,
			estimate: "about 1 min cold", module: "github.com/containernetworking/plugins", version: v.CNIPlugins,
			build: buildCNIPlugins,
		},
	}
}

// NodeReady reports whether every node binary is in the cache with a
// matching stamp.
func NodeReady(o Options) bool {
	o.defaults()
	return allFresh(nodeComponents(o))
}

// EnsureNode returns the node binaries, building whichever are missing or
// stale from the pinned Go modules (there is no download: the node image
// is built here from source only). It takes the same cache lock as Ensure.
func EnsureNode(ctx context.Context, o Options) (*NodeSet, error) {
	o.defaults()
	o.NoDownload = true
	if err := ensureAll(ctx, o, nil, nodeComponents(o)); err != nil {
		return nil, err
	}
	s := NodePaths(o)
	return &s, nil
}

// versionLDFlags stamp the Kubernetes version into the binaries: kubeadm
// compares it with the cluster's version, and the kubelet reports it.
func versionLDFlags(v string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var b strings.Builder
	b.WriteString("-s -w")
	for _, kv := range [][2]string{{"gitVersion", v}, {"gitMajor", major}, {"gitMinor", minor}, {"gitTreeState", "clean"}} {
		fmt.Fprintf(&b, " -X k8s.io/component-base/version.%s=%s", kv[0], kv[1])
	}
	return b.String()
}

func buildKubernetesNode(ctx context.Context, o Options, c component) error {
	if err := writeK8sModule(c.dir, o.Versions, binNames(c)); err != nil {
		return err
	}
	if err := runGo(ctx, o, "the Kubernetes module graph", c.dir, nil, "mod", "tidy"); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-ldflags=" + versionLDFlags(o.Versions.Kubernetes), "-o", "bin/"}
	for _, b := range binNames(c) {
		args = append(args, "k8s.io/kubernetes/cmd/"+b)
	}
	return runGo(ctx, o, strings.Join(binNames(c), ", "), c.dir, nil, args...)
}

func buildContainerd(ctx context.Context, o Options, c component) error {
	pkgs := []string{c.module + "/cmd/containerd", c.module + "/cmd/containerd-shim-runc-v2", c.module + "/cmd/ctr"}
	// Static binaries without the snapshotters that need C libraries: the
	// node uses overlayfs.
	return buildToolModule(ctx, o, c, "containerdbuild", pkgs, "-tags=no_btrfs no_devmapper no_zfs no_aufs")
}

func buildCNIPlugins(ctx context.Context, o Options, c component) error {
	var pkgs []string
	for _, b := range c.bins {
		sub := "main"
		switch filepath.Base(b) {
		case "host-local":
			sub = "ipam"
		case "portmap":
			sub = "meta"
		}
		pkgs = append(pkgs, c.module+"/plugins/"+sub+"/"+filepath.Base(b))
	}
	return buildToolModule(ctx, o, c, "cnibuild", pkgs)
}

// buildToolModule builds static binaries of pkgs (all in c.module) into
// c.dir/bin through a module of its own that requires c.module at
// c.version.
func buildToolModule(ctx context.Context, o Options, c component, name string, pkgs []string, flags ...string) error {
	gomod := fmt.Sprintf("module nvcfharness.local/%s\n\ngo 1.26.0\n\nrequire %s %s\n", name, c.module, c.version)
	var tools strings.Builder
	fmt.Fprintf(&tools, "//go:build tools\n\npackage %s\n\nimport (\n", name)
	for _, p := range pkgs {
		fmt.Fprintf(&tools, "\t_ %q\n", p)
	}
	tools.WriteString(")\n")
	for file, data := range map[string]string{"go.mod": gomod, "tools.go": tools.String()} {
		if err := os.WriteFile(filepath.Join(c.dir, file), []byte(data), 0o644); err != nil {
			return fmt.Errorf("%w: write %s: %w", ErrBuild, file, err)
		}
	}
	env := []string{"CGO_ENABLED=0"}
	if err := runGo(ctx, o, "the "+name+" module graph", c.dir, env, "mod", "tidy"); err != nil {
		return err
	}
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w"}, flags...)
	args = append(append(args, "-o", "bin/"), pkgs...)
	return runGo(ctx, o, c.name, c.dir, env, args...)
}

func binNames(c component) []string {
	var n []string
	for _, b := range c.bins {
		n = append(n, filepath.Base(b))
	}
	return n
}
