package binaries

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// component is one thing built into its own cache folder.
type component struct {
	name     string   // what the progress lines call it
	dir      string   // its cache folder
	bins     []string // absolute paths it produces
	estimate string   // expected cold build time, for the progress line
	// module and version must appear in each binary's build info, as the
	// main module or as a dependency.
	module, version string
	build           func(ctx context.Context, o Options, c component) error
	// download fetches the published release into the component's bins
	// and returns where from.
	download func(ctx context.Context, d *downloader, o Options, c component) (string, error)
}

// stamp is written beside a component's binaries after a build or a
// download (or after binaries built by hand were verified), naming what
// they are.
type stamp struct {
	Module  string    `json:"module"`
	Version string    `json:"version"`
	Built   time.Time `json:"built"`
	// Source is "build", or the URL the release was downloaded from.
	Source string `json:"source,omitempty"`
}

func components(o Options) []component {
	s := Paths(o)
	v := o.Versions
	return []component{
		{
			name: "kube-apiserver, kube-controller-manager and kube-scheduler " + v.Kubernetes,
			dir:  k8sDir(o), bins: []string{s.APIServer, s.ControllerManager, s.Scheduler},
			estimate: "about 8–13 min cold on 2 cores", module: "k8s.io/kubernetes", version: v.Kubernetes,
			build: buildKubernetes, download: downloadKubernetes,
		},
		{
			name: "etcd " + v.Etcd, dir: etcdDir(o), bins: []string{s.Etcd},
			estimate: "about 20 s cold", module: "go.etcd.io/etcd/server/v3", version: v.Etcd,
			build: buildEtcd, download: downloadEtcd,
		},
		{
			name: "coredns " + v.CoreDNS, dir: corednsDir(o), bins: []string{s.CoreDNS},
			estimate: "about 1.5 min cold", module: "github.com/coredns/coredns", version: v.CoreDNS,
			build: buildCoreDNS, download: downloadCoreDNS,
		},
	}
}

// kubectlComponent is kubectl in a folder of its own: a module of its own
// too, so that it builds after the control plane, reusing its compiled
// packages, and only when asked for.
func kubectlComponent(o Options) component {
	v := o.Versions
	dir := kubectlDir(o)
	return component{
		name: "kubectl " + v.Kubernetes, dir: dir, bins: []string{filepath.Join(dir, "bin", "kubectl")},
		estimate: "about 1 min cold after the control plane", module: "k8s.io/kubernetes", version: v.Kubernetes,
		build: buildKubernetes, download: downloadKubernetes,
	}
}

func ensureComponent(ctx context.Context, o Options, d *downloader, c component) error {
	if err := waitIdle(ctx, c.dir, o); err != nil {
		return err
	}
	if c.module == "go.etcd.io/etcd/server/v3" {
		adoptEtcdName(c.bins[0]) // `go install …/server/v3` names its binary v3
	}
	if c.fresh() {
		o.Log.Debug("binaries reused", "component", c.name, "dir", c.dir)
		return nil
	}
	if err := c.verify(); err == nil {
		// Built by hand (or stamp lost): the binaries prove what they are.
		return c.writeStamp("build")
	}
	if err := os.MkdirAll(filepath.Join(c.dir, "bin"), 0o755); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBuild, c.dir, err)
	}
	start := time.Now()
	if !o.NoDownload && c.download != nil {
		fmt.Fprintf(o.Progress, "downloading %s…\n", c.name)
		from, err := c.download(ctx, d, o, c)
		var un *unavailable
		switch {
		case err == nil:
			fmt.Fprintf(o.Progress, "downloaded %s from %s in %s (SHA-256 verified)\n", c.name, from, time.Since(start).Round(100*time.Millisecond))
			return c.writeStamp(from)
		case errors.As(err, &un):
			fmt.Fprintf(o.Progress, "cannot download %s after %s (%v); building from source instead\n", c.name, time.Since(start).Round(100*time.Millisecond), err)
			start = time.Now()
		default:
			return err // a checksum mismatch or a local failure: never papered over by a build
		}
	}
	fmt.Fprintf(o.Progress, "building %s from source… (%s)\n", c.name, c.estimate)
	build := c.build
	if o.build != nil {
		build = o.build
	}
	if err := build(ctx, o, c); err != nil {
		return err
	}
	if err := c.verify(); err != nil {
		return fmt.Errorf("%w: %s built but %w", ErrBuild, c.name, err)
	}
	fmt.Fprintf(o.Progress, "built %s in %s\n", c.name, time.Since(start).Round(time.Second))
	return c.writeStamp("build")
}

func (c component) stampPath() string { return filepath.Join(c.dir, "stamp.json") }

// fresh reports whether the stamp names this version and every binary exists.
func (c component) fresh() bool {
	data, err := os.ReadFile(c.stampPath())
	if err != nil {
		return false
	}
	var s stamp
	if json.Unmarshal(data, &s) != nil || s.Module != c.module || s.Version != c.version {
		return false
	}
	for _, b := range c.bins {
		if fi, err := os.Stat(b); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// verify reads each binary's Go build info and checks the module version.
func (c component) verify() error {
	for _, b := range c.bins {
		bi, err := buildinfo.ReadFile(b)
		if err != nil {
			return fmt.Errorf("%s is not a readable Go binary: %w", b, err)
		}
		mods := []string{bi.Main.Path + "@" + bi.Main.Version}
		for _, d := range bi.Deps {
			mods = append(mods, d.Path+"@"+d.Version)
		}
		if !slices.Contains(mods, c.module+"@"+c.version) {
			return fmt.Errorf("%s was not built from %s@%s (main module %s)", b, c.module, c.version, mods[0])
		}
	}
	return nil
}

func (c component) writeStamp(source string) error {
	data, _ := json.MarshalIndent(stamp{Module: c.module, Version: c.version, Built: time.Now().UTC(), Source: source}, "", "  ")
	if err := atomicfile.Write(c.stampPath(), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("%w: write stamp: %w", ErrBuild, err)
	}
	return nil
}

// adoptEtcdName renames the binary that `go install` calls v3 to etcd.
func adoptEtcdName(etcd string) {
	v3 := filepath.Join(filepath.Dir(etcd), "v3")
	if _, err := os.Stat(etcd); err == nil {
		return
	}
	if _, err := os.Stat(v3); err == nil {
		_ = os.Rename(v3, etcd)
	}
}

// waitIdle waits while another process has its working directory in dir
// (a build in progress there: ours from another harness, or a hand build).
func waitIdle(ctx context.Context, dir string, o Options) error {
	told := false
	for {
		pid := busy(dir)
		if pid == 0 {
			return nil
		}
		if !told {
			fmt.Fprintf(o.Progress, "waiting for the build already running in %s (pid %d)…\n", dir, pid)
			told = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: waiting for pid %d building in %s: %w", ErrBuild, pid, dir, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// busy returns the pid of a process (not us) whose cwd is dir or below it, or 0.
func busy(dir string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+"/") {
			return pid
		}
	}
	return 0
}
