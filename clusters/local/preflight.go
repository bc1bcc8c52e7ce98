package local

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/preflight"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// ErrPreflight is wrapped when the machine lacks what the provider needs.
var ErrPreflight = preflight.ErrFailed

// MinBuildSpace is the free space the control-plane build needs in the
// binary cache's filesystem and in Go's build cache: Kubernetes alone
// leaves about 4 GiB of compiled packages in the Go build cache, its
// modules about 1.5 GiB, the binaries 0.5 GiB; the rest is margin.
const MinBuildSpace = 8 << 30

// MinStateSpace is the free space an environment needs in the state
// folder: etcd preallocates a 64 MiB WAL per cluster and grows its
// database as the fixtures deploy; the agent, control-plane and pod logs
// go there too.
const MinStateSpace = 1 << 30

// Disk asks for free space in a folder before long work (see Preflight).
type Disk = preflight.Disk

// Preflight checks, in a second and before anything long, what Up needs
// from this machine: root, ip and nft on PATH, the ports spec's clusters
// bind and the address ranges they route (unless one of our environments
// is up already, holding them: Up reuses or replaces it), MinStateSpace
// free in the state folder, MinBuildSpace free in the caches when the
// control-plane binaries still have to be fetched or built, and the
// caller's disks (a run's artifacts folder). spec nil checks what
// `harness binaries` needs (no ports, no state). The error lists every
// problem with what to do.
func Preflight(o Options, spec *clusters.Spec, disks ...Disk) error {
	p := &provider{o: o.withDefaults()}
	c := preflight.Checks{
		Root:  true,
		Tools: []preflight.Tool{{Name: "ip", Package: "iproute2"}, {Name: "nft", Package: "nftables"}},
	}
	if spec != nil {
		if !p.anyLive() {
			c.Ports = ports(*spec)
		}
		c.Ranges = ranges(*spec)
		c.Disks = append(c.Disks, preflight.Disk{Dir: p.o.StateRoot, Min: MinStateSpace,
			Why: "the environment (etcd data, control-plane and pod logs)", Hint: "point XDG_STATE_HOME at a larger filesystem"})
	}
	c.Disks = append(c.Disks, disks...)
	if !binaries.Ready(binaries.Options{CacheDir: p.o.CacheDir}) {
		why := "building the control plane (when its releases cannot be downloaded)"
		c.Disks = append(c.Disks, preflight.Disk{Dir: p.o.CacheDir, Min: MinBuildSpace, Why: why,
			Hint: "point XDG_CACHE_HOME at a larger filesystem"})
		if gc := goBuildCache(); gc != "" && !sameFS(gc, p.o.CacheDir) {
			c.Disks = append(c.Disks, preflight.Disk{Dir: gc, Min: MinBuildSpace, Why: why + " (Go's build cache)",
				Hint: "point GOCACHE at a larger filesystem"})
		}
	}
	return preflight.Run(c)
}

// anyLive reports whether an environment of ours is up on this machine, or
// processes of one are left (Up kills them before it binds anything).
func (p *provider) anyLive() bool {
	if len(markedNames(p.o.StateRoot)) > 0 {
		return true
	}
	names, _ := state.Names(p.o.StateRoot)
	for _, n := range names {
		if st, err := state.Load(p.dir(n)); err == nil && agentAlive(st) {
			return true
		}
	}
	return false
}

// ports lists what the clusters of spec bind that exists before Up: the
// API servers on every address, etcd on 127.0.0.1, the kubelet APIs (a
// listener on any address of that port would collide with the bridge
// address) and the external DNS. CoreDNS binds port 53 on bridge
// addresses that do not exist yet; it is not checked. Only an environment
// that starts alone is checked, and it takes the plan's first place.
func ports(spec clusters.Spec) []preflight.Port {
	var ps []preflight.Port
	for i, cs := range spec.Clusters {
		c := plan.For(i, cs.Name)
		ps = append(ps,
			preflight.Port{Network: "tcp", Addr: fmt.Sprintf("0.0.0.0:%d", c.APIServerPort()), Owner: "kube-apiserver of " + cs.Name},
			preflight.Port{Network: "tcp", Addr: fmt.Sprintf("127.0.0.1:%d", c.EtcdClientPort()), Owner: "etcd client port of " + cs.Name},
			preflight.Port{Network: "tcp", Addr: fmt.Sprintf("127.0.0.1:%d", c.EtcdPeerPort()), Owner: "etcd peer port of " + cs.Name},
		)
		for n := range cs.Nodes {
			ps = append(ps, preflight.Port{Network: "tcp", Addr: fmt.Sprintf("0.0.0.0:%d", c.KubeletPort(n)), Owner: "kubelet API of " + c.NodeName(n)})
		}
	}
	dns := plan.Env{}.ExternalDNS().String()
	return append(ps,
		preflight.Port{Network: "udp", Addr: dns, Owner: "the harness's external DNS"},
		preflight.Port{Network: "tcp", Addr: dns, Owner: "the harness's external DNS"})
}

// ranges are the address ranges the clusters of spec route through the
// provider's bridges and lo: pods, services, load balancers. Routes on
// the provider's own links are no conflict.
func ranges(spec clusters.Spec) []preflight.Range {
	var rs []preflight.Range
	for i, cs := range spec.Clusters {
		c := plan.For(i, cs.Name)
		rs = append(rs,
			preflight.Range{Prefix: c.PodPrefix(), Owner: "pods of " + cs.Name, Ours: podnet.OwnsLink},
			preflight.Range{Prefix: c.ServicePrefix(), Owner: "services of " + cs.Name, Ours: podnet.OwnsLink},
			preflight.Range{Prefix: c.LBPool(), Owner: "load balancers of " + cs.Name, Ours: podnet.OwnsLink})
	}
	return rs
}

// goBuildCache is $GOCACHE or its default, when it exists.
func goBuildCache() string {
	d := os.Getenv("GOCACHE")
	if d == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		d = filepath.Join(uc, "go-build")
	}
	if d == "off" {
		return ""
	}
	return d
}

// sameFS reports whether a and b (or their nearest existing parents) are on one filesystem.
func sameFS(a, b string) bool {
	da, ea := preflight.DeviceOf(a)
	db, eb := preflight.DeviceOf(b)
	return ea == nil && eb == nil && da == db
}

// ErrDiskFull is wrapped by DiskFull's error.
var ErrDiskFull = preflight.ErrDiskFull

// DiskFull explains an error caused by a full filesystem (ENOSPC): which
// folder, how much is free, what to do. Other errors pass unchanged. The
// CLI passes every command's error through it.
func DiskFull(err error) error { return preflight.DiskFull(err) }
