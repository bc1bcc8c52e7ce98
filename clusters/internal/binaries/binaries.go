// Package binaries provides the embedded provider's control-plane binaries
// (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd,
// CoreDNS) at pinned upstream versions in a cache, once, and reuses them
// afterwards. Each component is downloaded from its upstream release (or a
// mirror, see Sources) and checked against the published SHA-256 when that
// is reachable, and built from the pinned Go modules otherwise; both land
// in the same folders. A version bump fills a new folder.
package binaries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/nvcf/conformance/clusters"
)

// Versions pins what is built.
type Versions struct {
	// Kubernetes is the k8s.io/kubernetes module version (e.g. v1.37.2).
	Kubernetes string `json:"kubernetes"`
	// Staging is the version of the k8s.io staging modules that replace the
	// v0.0.0 requirements of k8s.io/kubernetes (e.g. v0.37.2).
	Staging string `json:"staging"`
	// Etcd is the go.etcd.io/etcd/server/v3 version.
	Etcd string `json:"etcd"`
	// CoreDNS is the github.com/coredns/coredns version.
	CoreDNS string `json:"coredns"`
	// Containerd is the github.com/containerd/containerd/v2 version (the
	// kind provider's node image).
	Containerd string `json:"containerd"`
	// CNIPlugins is the github.com/containernetworking/plugins version
	// (the kind provider's node image).
	CNIPlugins string `json:"cniPlugins"`
}

// Pinned are the versions the provider is tested with.
var Pinned = Versions{
	Kubernetes: "v1.37.2", Staging: "v0.37.2", Etcd: "v3.6.16", CoreDNS: "v1.14.7",
	Containerd: "v2.3.7", CNIPlugins: "v1.10.0",
}

// Set holds the absolute paths of the built binaries a cluster runs
// (kubectl, for people, comes apart: EnsureKubectl).
type Set struct {
	APIServer         string `json:"kubeAPIServer"`
	ControllerManager string `json:"kubeControllerManager"`
	Scheduler         string `json:"kubeScheduler"`
	Etcd              string `json:"etcd"`
	CoreDNS           string `json:"coredns"`
}

// Options say where to build and whom to tell.
type Options struct {
	// CacheDir is the cache root (default: clusters.CacheHome()).
	CacheDir string
	// Versions to build (zero: Pinned).
	Versions Versions
	// Progress receives one line per step and a heartbeat while a build
	// runs (nil: discarded).
	Progress io.Writer
	// Heartbeat is the interval of "still building" lines (default 20 s, as
	// hack/heartbeat.sh: no phase of a cold make e2e is silent for 30 s).
	Heartbeat time.Duration
	// Log receives structured logs (nil: discarded).
	Log *slog.Logger
	// Go is the go command (default: "go" on PATH, else /usr/local/go/bin/go).
	Go string
	// Sources are the release base URLs; an empty field takes its
	// environment variable (EnvKubernetesURL, …), else DefaultSources.
	Sources Sources
	// NoDownload always builds from source (also: NVCF_BINARIES_DOWNLOAD=off).
	NoDownload bool

	// alignWith, when set, replaces the running program's dependencies as
	// the module versions a Kubernetes build is aligned with (tests).
	alignWith []*debug.Module
	// build, when set, replaces every component's source build (tests).
	build func(ctx context.Context, o Options, c component) error
	// connectTimeout bounds a connection (and TLS handshake) to a release
	// host, headerTimeout the wait for its answer, stallTimeout a transfer
	// that stops moving.
	connectTimeout, headerTimeout, stallTimeout time.Duration
}

// ErrBuild is wrapped by every failed build.
var ErrBuild = errors.New("building control-plane binaries failed")

func (o *Options) defaults() {
	if o.CacheDir == "" {
		o.CacheDir = clusters.CacheHome()
	}
	if o.Versions == (Versions{}) {
		o.Versions = Pinned
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 20 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Go == "" {
		o.Go = goCommand()
	}
	o.Sources.defaults()
	if downloadsOff() {
		o.NoDownload = true
	}
	if o.connectTimeout <= 0 {
		o.connectTimeout = defaultConnectTimeout
	}
	if o.headerTimeout <= 0 {
		o.headerTimeout = defaultHeaderTimeout
	}
	if o.stallTimeout <= 0 {
		o.stallTimeout = defaultStallTimeout
	}
}

// Paths returns where the binaries of o live, built or not.
func Paths(o Options) Set {
	o.defaults()
	k := filepath.Join(k8sDir(o), "bin")
	return Set{
		APIServer:         filepath.Join(k, "kube-apiserver"),
		ControllerManager: filepath.Join(k, "kube-controller-manager"),
		Scheduler:         filepath.Join(k, "kube-scheduler"),
		Etcd:              filepath.Join(etcdDir(o), "bin", "etcd"),
		CoreDNS:           filepath.Join(corednsDir(o), "bin", "coredns"),
	}
}

func k8sDir(o Options) string     { return filepath.Join(o.CacheDir, "k8s-build-"+o.Versions.Kubernetes) }
func kubectlDir(o Options) string { return filepath.Join(o.CacheDir, "kubectl-"+o.Versions.Kubernetes) }
func etcdDir(o Options) string    { return filepath.Join(o.CacheDir, "etcd-"+o.Versions.Etcd) }
func corednsDir(o Options) string { return filepath.Join(o.CacheDir, "coredns-"+o.Versions.CoreDNS) }

// Ready reports whether every binary is in the cache with a matching stamp
// (Ensure would then neither download nor build anything).
func Ready(o Options) bool {
	o.defaults()
	return allFresh(components(o))
}

func allFresh(cs []component) bool {
	for _, c := range cs {
		if !c.fresh() {
			return false
		}
	}
	return true
}

// ensureAll brings every component of cs into the cache (d nil: build
// only) under the cache's build lock, so that two harness processes never
// build the same thing at once.
func ensureAll(ctx context.Context, o Options, d *downloader, cs []component) error {
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return fmt.Errorf("%w: cache dir %s: %w", ErrBuild, o.CacheDir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(o.CacheDir, "build.lock"), o.Progress)
	if err != nil {
		return err
	}
	defer unlock()
	for _, c := range cs {
		if err := ensureComponent(ctx, o, d, c); err != nil {
			return err
		}
	}
	return nil
}

// Ensure returns the binaries, downloading or building whichever are
// missing or stale.
// It holds a lock in the cache so that two harness processes never build
// the same thing at once, and waits for a build another process (or a hand
// build) is running in the same folder.
func Ensure(ctx context.Context, o Options) (*Set, error) {
	o.defaults()
	if err := ensureAll(ctx, o, newDownloader(o), components(o)); err != nil {
		return nil, err
	}
	s := Paths(o)
	return &s, nil
}

// KubectlPath is where kubectl lives in the cache, built or not.
func KubectlPath(o Options) string {
	o.defaults()
	return kubectlComponent(o).bins[0]
}

// EnsureKubectl returns kubectl, downloading or building it when it is
// missing or stale, like Ensure. No cluster needs it, so it is not part of
// Ensure's set: a cold build of the control plane does not wait for it.
func EnsureKubectl(ctx context.Context, o Options) (string, error) {
	o.defaults()
	c := kubectlComponent(o)
	if err := ensureAll(ctx, o, newDownloader(o), []component{c}); err != nil {
		return "", err
	}
	return c.bins[0], nil
}
