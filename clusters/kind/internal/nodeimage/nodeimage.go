// Package nodeimage builds the kind provider's node image offline, once,
// and caches it under a key of its inputs: a debootstrap'd Debian root with
// systemd, the Kubernetes node and control-plane binaries built from
// source, containerd, runc and the CNI plugins, and the pause, etcd,
// CoreDNS, kube-apiserver, kube-controller-manager, kube-scheduler and
// kube-proxy images as OCI archives, which each node imports into
// containerd at boot before the kubelet starts.
//
// The layout is the one kind's cluster library expects of a node image:
// /kind/version, the kubelet unit with kubeadm's drop-in, containerd's
// socket at /run/containerd/containerd.sock, kubeadm and kubectl on PATH, an
// entrypoint that prepares cgroups and then execs systemd.
package nodeimage

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/internal/atomicfile"
)

//go:embed files
var files embed.FS

// layoutVersion changes when the image's layout changes without any input
// file changing.
const layoutVersion = "2"

// Options say where the inputs are and whom to tell.
type Options struct {
	// CacheDir is the cache root (the binaries' one).
	CacheDir string
	// Progress receives one line per step.
	Progress io.Writer
	// Pause is the nvcf-pause binary (the pod sandbox); Shim is the
	// nvcf-runc binary (containerd's runc where the capability bounding
	// set lacks CAP_SYS_RESOURCE). Both sit in the harness's bin/.
	Pause, Shim string
}

// Image is a built node image.
type Image struct {
	// Ref is the image's name in Docker, with the key as its tag's suffix.
	Ref string `json:"ref"`
	// Archive is the Docker archive to `docker load`.
	Archive string `json:"archive"`
	// Images are the references of the images inside.
	Images []string `json:"images"`
	// Key identifies the inputs.
	Key string `json:"key"`
	// BuildSeconds is how long the build took (the cold one).
	BuildSeconds float64 `json:"buildSeconds"`
}

// Versions are the image tags kubeadm must be told about: kubeadm names
// etcd and CoreDNS after its own preferred versions, which are not the ones
// built here.
type Versions struct {
	Kubernetes, Etcd, CoreDNS string
}

// Pinned are the versions in the node image.
func Pinned() Versions {
	return Versions{Kubernetes: binaries.Pinned.Kubernetes, Etcd: binaries.Pinned.Etcd, CoreDNS: binaries.Pinned.CoreDNS}
}

// Find returns the cached node image for the current inputs without
// building anything, or an error saying what is missing.
func Find(o Options) (*Image, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if !binaries.Ready(binaries.Options{CacheDir: o.CacheDir}) || !binaries.NodeReady(binaries.Options{CacheDir: o.CacheDir}) {
		return nil, errors.New("the node image's binaries are not built: run `harness kind node-image`")
	}
	key, err := inputKey(o)
	if err != nil {
		return nil, err
	}
	return load(o, key)
}

func load(o Options, key string) (*Image, error) {
	b, err := os.ReadFile(filepath.Join(o.CacheDir, "kind-node-"+key, "image.json"))
	if err != nil {
		return nil, fmt.Errorf("no node image for these inputs (key %s): run `harness kind node-image`", key)
	}
	var img Image
	if err := json.Unmarshal(b, &img); err != nil {
		return nil, err
	}
	if _, err := os.Stat(img.Archive); err != nil {
		return nil, fmt.Errorf("node image %s: %w: run `harness kind node-image`", img.Ref, err)
	}
	return &img, nil
}

func (o *Options) check() error {
	if o.CacheDir == "" || o.Pause == "" || o.Shim == "" {
		return errors.New("nodeimage.Options needs CacheDir, Pause and Shim")
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return nil
}

// Build returns the node image, building whatever of it is missing: the
// binaries (from source), the Debian root, the component images and the
// node image's archive. A second call with the same inputs only hashes them.
func Build(ctx context.Context, o Options) (*Image, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	bo := binaries.Options{CacheDir: o.CacheDir, Progress: o.Progress}
	cp, err := binaries.Ensure(ctx, bo)
	if err != nil {
		return nil, err
	}
	node, err := binaries.EnsureNode(ctx, bo)
	if err != nil {
		return nil, err
	}
	root, rootTar, err := ensureRootfs(ctx, o)
	if err != nil {
		return nil, err
	}
	key, err := inputKey(o)
	if err != nil {
		return nil, err
	}
	if img, err := load(o, key); err == nil {
		fmt.Fprintf(o.Progress, "node image %s is cached (%s)\n", img.Ref, img.Archive)
		return img, nil
	}
	dir := filepath.Join(o.CacheDir, "kind-node-"+key)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	imagesDir := filepath.Join(dir, "images")
	if err := os.MkdirAll(imagesDir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "assembling the component images (OCI archives)…\n")
	refs, err := buildImages(root, imagesDir, components(o, cp, node))
	if err != nil {
		return nil, err
	}
	img := Image{Ref: "nvcf.local/kind-node:" + binaries.Pinned.Kubernetes + "-" + key, Archive: filepath.Join(dir, "node.tar"), Images: refs, Key: key}
	fmt.Fprintf(o.Progress, "assembling the node image %s…\n", img.Ref)
	if err := writeNodeImage(o, node, rootTar, imagesDir, img); err != nil {
		return nil, err
	}
	img.BuildSeconds = time.Since(start).Seconds()
	b, _ := json.MarshalIndent(img, "", "  ")
	if err := atomicfile.Write(filepath.Join(dir, "image.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "node image %s built in %s (%s)\n", img.Ref, time.Since(start).Round(time.Second), img.Archive)
	prune(o.CacheDir, dir)
	return &img, nil
}

// prune removes the node images of other inputs from the cache (each is
// about 400 MB); Docker keeps its own copy of one that was loaded.
func prune(cacheDir, keep string) {
	old, _ := filepath.Glob(filepath.Join(cacheDir, "kind-node-*"))
	for _, d := range old {
		if d != keep {
			_ = os.RemoveAll(d)
		}
	}
}

// components are the images inside the node image.
func components(o Options, cp *binaries.Set, node *binaries.NodeSet) []component {
	v := Pinned()
	return []component{
		{name: "pause", tag: PauseTag, bin: o.Pause, entrypoint: []string{"/pause"}},
		{name: "etcd", tag: v.Etcd, bin: cp.Etcd},
		{name: "coredns", tag: v.CoreDNS, bin: cp.CoreDNS, entrypoint: []string{"/coredns"}},
		{name: "kube-apiserver", tag: v.Kubernetes, bin: node.APIServer},
		{name: "kube-controller-manager", tag: v.Kubernetes, bin: node.ControllerManager},
		{name: "kube-scheduler", tag: v.Kubernetes, bin: node.Scheduler},
		{name: "kube-proxy", tag: v.Kubernetes, bin: node.KubeProxy, withIptables: true},
	}
}

// inputKey hashes everything the image is made of: the layout version,
// the root's package set, the embedded files, and every binary's bytes.
func inputKey(o Options) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "layout %s\nroot %s\n", layoutVersion, rootfsKey())
	err := walkFiles(func(name string, data []byte) error {
		fmt.Fprintf(h, "file %s %d\n", name, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", err
	}
	bo := binaries.Options{CacheDir: o.CacheDir}
	cp, node := binaries.Paths(bo), binaries.NodePaths(bo)
	bins := []string{o.Pause, o.Shim, cp.Etcd, cp.CoreDNS, node.Kubelet, node.Kubeadm, node.KubeProxy, node.APIServer,
		node.ControllerManager, node.Scheduler, node.Kubectl, node.Containerd, node.Shim, node.Ctr}
	for _, p := range binaries.CNIPlugins {
		bins = append(bins, filepath.Join(node.CNI, p))
	}
	for _, b := range bins {
		f, err := os.Open(b)
		if err != nil {
			return "", fmt.Errorf("node image input: %w", err)
		}
		fmt.Fprintf(h, "bin %s\n", filepath.Base(b))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func walkFiles(fn func(name string, data []byte) error) error {
	ents, err := files.ReadDir("files")
	if err != nil {
		return err
	}
	for _, e := range ents {
		data, err := files.ReadFile("files/" + e.Name())
		if err != nil {
			return err
		}
		if err := fn(e.Name(), data); err != nil {
			return err
		}
	}
	return nil
}

func file(name string) []byte {
	b, err := files.ReadFile("files/" + name)
	if err != nil {
		panic(err) // embedded: a missing one is a build mistake
	}
	return b
}

// masked are the units of Debian's systemd that have no work in a node
// container (devices, kernel modules, consoles).
var masked = []string{
	"systemd-udevd.service", "systemd-udev-trigger.service", "systemd-modules-load.service",
	"systemd-binfmt.service", "getty@tty1.service", "console-getty.service", "serial-getty@.service",
	"systemd-firstboot.service", "e2scrub_reap.service", "apt-daily.timer", "apt-daily-upgrade.timer",
	"dpkg-db-backup.timer", "fstrim.timer",
}

// nodeLayer is what goes on top of the Debian root.
func nodeLayer(o Options, node *binaries.NodeSet, imagesDir string) (*layer, error) {
	l := newLayer()
	for p, src := range map[string]string{
		"/usr/bin/kubelet": node.Kubelet, "/usr/bin/kubeadm": node.Kubeadm, "/usr/bin/kubectl": node.Kubectl,
		"/usr/local/bin/containerd": node.Containerd, "/usr/local/bin/containerd-shim-runc-v2": node.Shim,
		"/usr/local/bin/ctr": node.Ctr, "/usr/local/sbin/nvcf-runc": o.Shim,
	} {
		l.file(p, src, 0o755)
	}
	for _, p := range binaries.CNIPlugins {
		l.file("/opt/cni/bin/"+p, filepath.Join(node.CNI, p), 0o755)
	}
	l.content("/usr/local/bin/entrypoint", file("entrypoint"), 0o755)
	l.content("/usr/local/bin/nvcf-import-images", file("nvcf-import-images"), 0o755)
	l.content("/etc/containerd/config.toml",
		[]byte(strings.ReplaceAll(string(file("containerd-config.toml")), "@SANDBOX@", Repository+"/pause:"+PauseTag)), 0o644)
	for _, u := range []string{"containerd.service", "kubelet.service", "kubelet.slice", "nvcf-images.service"} {
		l.content("/etc/systemd/system/"+u, file(u), 0o644)
	}
	for _, u := range []string{"containerd.service", "kubelet.service", "nvcf-images.service"} {
		l.symlink("/etc/systemd/system/multi-user.target.wants/"+u, "/etc/systemd/system/"+u)
	}
	for _, u := range masked {
		l.symlink("/etc/systemd/system/"+u, "/dev/null")
	}
	l.content("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", file("10-kubeadm.conf"), 0o644)
	l.content("/etc/default/kubelet", file("kubelet.default"), 0o644)
	// debootstrap copied the build machine's name; Docker mounts the
	// node's own over it.
	l.content("/etc/hostname", []byte("localhost\n"), 0o644)
	l.content("/etc/crictl.yaml", []byte("runtime-endpoint: unix:///run/containerd/containerd.sock\n"), 0o644)
	l.content("/kind/version", []byte(binaries.Pinned.Kubernetes+"\n"), 0o644)
	l.content("/kind/manifests/default-storage.yaml", file("default-storage.yaml"), 0o644)
	l.dir("/etc/kubernetes/manifests", 0o755)
	l.dir("/etc/cni/net.d", 0o755)
	ents, err := os.ReadDir(imagesDir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		l.file("/kind/images/"+e.Name(), filepath.Join(imagesDir, e.Name()), 0o644)
	}
	return l, nil
}

func writeNodeImage(o Options, node *binaries.NodeSet, rootTar, imagesDir string, img Image) error {
	top, err := nodeLayer(o, node, imagesDir)
	if err != nil {
		return err
	}
	topTar := filepath.Join(filepath.Dir(img.Archive), "node-layer.tar")
	if err := top.writeFile(topTar); err != nil {
		return err
	}
	defer os.Remove(topTar)
	var layers []v1.Layer
	for _, p := range []string{rootTar, topTar} {
		la, err := tarball.LayerFromFile(p, tarball.WithCompressionLevel(gzip.BestSpeed))
		if err != nil {
			return err
		}
		layers = append(layers, la)
	}
	im, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return err
	}
	cf, err := im.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}
	cf.Config.Env = []string{"container=docker", "PATH=" + imagePath}
	cf.Config.StopSignal = "SIGRTMIN+3"
	if im, err = mutate.ConfigFile(im, cf); err != nil {
		return err
	}
	tag, err := name.NewTag(img.Ref)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(img.Archive+".partial", tag, im); err != nil {
		return err
	}
	return os.Rename(img.Archive+".partial", img.Archive)
}
