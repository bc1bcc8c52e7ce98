package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// CleanupEnvironment removes the network objects of the environment of
// cfg whose state folder is dir, and only those: each cluster's pod
// namespaces (and the processes in them), its bridge, and the service and
// load-balancer addresses of its ranges on lo; the nftables table goes with
// the last bridge. Objects of other environments and of tests running at
// the same time (other bridge indexes, other names) are left alone.
// Idempotent; used by the agent's teardown and after a killed agent.
func CleanupEnvironment(ctx context.Context, dir string, cfg Config, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	for i, c := range cfg.Spec.Clusters {
		p := cfg.Place.Cluster(i, c.Name)
		if !leftovers(p) {
			continue
		}
		log.Info("removing the pod network a previous agent left", "cluster", c.Name, "bridge", p.Bridge())
		stateDir := filepath.Join(dir, c.Name)
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			errs = append(errs, err)
			continue
		}
		// SetupCluster adopts the existing bridge; Close removes the
		// cluster's namespaces (killing what runs in them) and the bridge.
		n, err := podnet.SetupCluster(ctx, podnet.ClusterConfig{Index: p.Index, Name: c.Name, StateDir: stateDir, Log: log})
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.Name, err))
			continue
		}
		errs = append(errs, n.Close(ctx))
	}
	errs = append(errs, removeLoopbackAddrs(ctx, cfg, log))
	return errors.Join(errs...)
}

// leftovers reports whether cluster p's bridge or any of its pod
// namespaces exists.
func leftovers(p plan.Cluster) bool {
	if _, err := os.Stat("/sys/class/net/" + p.Bridge()); err == nil {
		return true
	}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), podnet.NetnsPrefix(p.Index, p.Name)) {
			return true
		}
	}
	return false
}

// removeLoopbackAddrs deletes the /32s of the clusters' service and
// load-balancer ranges from lo (the LB controller removes them when it
// stops; a killed agent leaves them).
func removeLoopbackAddrs(ctx context.Context, cfg Config, log *slog.Logger) error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return fmt.Errorf("find lo: %w", err)
	}
	addrs, err := lo.Addrs()
	if err != nil {
		return fmt.Errorf("addresses of lo: %w", err)
	}
	var errs []error
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		for i, c := range cfg.Spec.Clusters {
			p := cfg.Place.Cluster(i, c.Name)
			if p.LBPool().Contains(ip) || p.ServicePrefix().Contains(ip) {
				log.Info("removing address from lo", "addr", ip)
				errs = append(errs, podnet.DelLoopback(ctx, ip))
			}
		}
	}
	return errors.Join(errs...)
}
