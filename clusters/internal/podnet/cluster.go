package podnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nvcf/conformance/model/topology"
)

// ClusterConfig names one cluster's pod network.
type ClusterConfig struct {
	// Index is the cluster's position in the topology (0-based); it picks
	// the bridge nvcfbr<Index> and the ranges of plan.go. Required range [0, MaxClusters).
	Index int
	// Name is the cluster's name, part of every pod netns name
	// (nvcf-<Name>-<uid8>); a DNS label (topology.IsDNSLabel). Required.
	Name string
	// StateDir holds the IPAM file ipam-<Name>.json. Required.
	StateDir string
	// Log receives what the network does; nil discards.
	Log *slog.Logger
}

// Cluster is one cluster's pod network: its bridge and its pods' namespaces.
type Cluster struct {
	cfg  ClusterConfig
	log  *slog.Logger
	ipam *ipam

	mu   sync.Mutex
	pods map[string]Pod // pod UID → pod
}

// SetupCluster creates (or reuses) the bridge of cluster cfg.Index with its
// gateway address, switches forwarding on for it, installs the nftables
// table and loads the IPAM, freeing addresses of namespaces that no longer
// exist. When it returns the gateway address can be bound (CoreDNS, the
// kubelet API).
func SetupCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if err := checkIndex(cfg.Index); err != nil {
		return nil, err
	}
	if !topology.IsDNSLabel(cfg.Name) { // it is part of netns names
		return nil, fmt.Errorf("cluster name %q: not a DNS label (lower-case letters, digits and '-', at most 63)", cfg.Name)
	}
	if cfg.StateDir == "" {
		return nil, errors.New("podnet.ClusterConfig.StateDir is required (the IPAM file lives there)")
	}
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("cluster", cfg.Name, "bridge", BridgeName(cfg.Index))
	m, err := loadIPAM(filepath.Join(cfg.StateDir, "ipam-"+cfg.Name+".json"), PodPrefix(cfg.Index))
	if err != nil {
		return nil, err
	}
	freed, err := m.Prune(netnsExists)
	if err != nil {
		return nil, err
	}
	if len(freed) > 0 {
		log.Info("freed addresses of pod namespaces that are gone", "netns", freed)
	}
	c := &Cluster{cfg: cfg, log: log, ipam: m, pods: map[string]Pod{}}
	if err := c.setupBridge(ctx); err != nil {
		return nil, err
	}
	if err := installTable(ctx); err != nil {
		return nil, err
	}
	if err := allowForward(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Cluster) setupBridge(ctx context.Context) error {
	br := BridgeName(c.cfg.Index)
	var lines []string
	if !linkExists(br) {
		lines = append(lines, "link add "+br+" type bridge")
	}
	lines = append(lines,
		fmt.Sprintf("link set %s address %s", br, BridgeMAC(c.cfg.Index)),
		fmt.Sprintf("addr replace %s/24 dev %s", c.Gateway(), br),
		"link set "+br+" up")
	if err := ipBatch(ctx, "", lines...); err != nil {
		return fmt.Errorf("bridge %s: %w", br, err)
	}
	fwd := "/proc/sys/net/ipv4/conf/" + br + "/forwarding"
	if err := os.WriteFile(fwd, []byte("1"), 0o644); err != nil {
		return fmt.Errorf("enable forwarding on %s: %w", br, err)
	}
	c.log.Info("bridge up", "gateway", c.Gateway())
	return nil
}

// Index is the cluster's position in the topology.
func (c *Cluster) Index() int { return c.cfg.Index }

// Name is the cluster's name.
func (c *Cluster) Name() string { return c.cfg.Name }

// Gateway is the bridge address, 198.18.(10+i).1.
func (c *Cluster) Gateway() netip.Addr { return GatewayOf(c.cfg.Index) }

// Bridge is the bridge's link name.
func (c *Cluster) Bridge() string { return BridgeName(c.cfg.Index) }

// Pods returns the pods this process attached, by UID.
func (c *Cluster) Pods() map[string]Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Pod, len(c.pods))
	for k, v := range c.pods {
		out[k] = v
	}
	return out
}

// Close removes every pod namespace of this cluster (including ones a
// previous agent left) and the bridge. Stop the kubelets first.
func (c *Cluster) Close(ctx context.Context) error {
	var errs []error
	prefix := NetnsPrefix(c.cfg.Index, c.cfg.Name)
	names, err := listNetns()
	errs = append(errs, err)
	for _, ns := range names {
		if strings.HasPrefix(ns, prefix) {
			errs = append(errs, removeNetns(ctx, ns), c.ipam.Release(ns))
		}
	}
	c.mu.Lock()
	c.pods = map[string]Pod{}
	c.mu.Unlock()
	if linkExists(c.Bridge()) {
		if err := ipBatch(ctx, "", "link del "+c.Bridge()); err != nil {
			errs = append(errs, err)
		}
	}
	if !anyBridgeLeft() {
		_, err := run(ctx, "", "nft", "delete", "table", "inet", HarnessTable)
		if err != nil && !strings.Contains(err.Error(), "No such file") {
			errs = append(errs, err)
		}
		errs = append(errs, removeForward(ctx))
		// Another environment may have made its bridge meanwhile: its
		// policy must stay.
		if anyBridgeLeft() {
			errs = append(errs, installTable(ctx), allowForward(ctx))
		}
	}
	return errors.Join(errs...)
}

// anyBridgeLeft reports whether any nvcfbr* link remains (the nft table is
// shared by every cluster on the host).
func anyBridgeLeft() bool {
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		if strings.HasPrefix(l.Name(), "nvcfbr") {
			return true
		}
	}
	return false
}
