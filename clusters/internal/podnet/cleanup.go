package podnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Cleanup removes everything of ours that a killed run may have left: the
// processes in and the namespaces nvcf-*, the links nvcfbr*/nvcfv*, the
// nftables tables inet nvcf_harness and inet nvcf_faults, our rules in
// iptables' DOCKER-USER chain, /etc/netns/nvcf-*,
// and every /32 of 198.19.0.0/16 on lo (load-balancer and ClusterIP
// addresses). It is idempotent. IPAM files stay (they live in the state dir;
// SetupCluster frees the addresses of namespaces that are gone).
func Cleanup(ctx context.Context, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := RequireRoot(); err != nil {
		return err
	}
	var errs []error
	names, err := listNetns()
	errs = append(errs, err)
	for _, ns := range names {
		if strings.HasPrefix(ns, "nvcf-") {
			log.Info("removing pod namespace", "netns", ns)
			errs = append(errs, removeNetns(ctx, ns))
		}
	}
	if dirs, _ := filepath.Glob("/etc/netns/nvcf-*"); len(dirs) > 0 {
		for _, d := range dirs {
			errs = append(errs, os.RemoveAll(d))
		}
	}
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		if n := l.Name(); OwnsLink(n) {
			log.Info("removing link", "link", n)
			errs = append(errs, ipBatch(ctx, "", "link del "+n))
		}
	}
	for _, table := range []string{HarnessTable, FaultsTable} {
		if _, err := run(ctx, "", "nft", "list", "table", "inet", table); err == nil {
			log.Info("removing nftables table", "table", table)
			_, err := run(ctx, "", "nft", "delete", "table", "inet", table)
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeForward(ctx))
	addrs, err := LoopbackAddrs(ctx)
	errs = append(errs, err)
	for _, a := range addrs {
		if HarnessRange.Contains(a) {
			errs = append(errs, DelLoopback(ctx, a))
		}
	}
	return errors.Join(errs...)
}

// AddLoopback puts addr/32 on the host's lo (idempotent), so a userspace
// listener can bind it and pods reach it through their gateway.
func AddLoopback(ctx context.Context, addr netip.Addr) error {
	if !addr.Is4() {
		return fmt.Errorf("loopback address %s: IPv4 only", addr)
	}
	return ipBatch(ctx, "", fmt.Sprintf("addr replace %s/32 dev lo", addr))
}

// DelLoopback removes addr/32 from lo; a missing address is not an error.
func DelLoopback(ctx context.Context, addr netip.Addr) error {
	err := ipBatch(ctx, "", fmt.Sprintf("addr del %s/32 dev lo", addr))
	if err != nil && (strings.Contains(err.Error(), "Address not found") || strings.Contains(err.Error(), "Cannot assign requested address")) {
		return nil
	}
	return err
}

// LoopbackAddrs lists the IPv4 addresses on lo.
func LoopbackAddrs(ctx context.Context) ([]netip.Addr, error) {
	out, err := run(ctx, "", "ip", "-4", "-o", "addr", "show", "dev", "lo")
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				if p, err := netip.ParsePrefix(f[i+1]); err == nil {
					addrs = append(addrs, p.Addr())
				}
			}
		}
	}
	return addrs, nil
}

// listNetns returns the names under /run/netns.
func listNetns() ([]string, error) {
	entries, err := os.ReadDir("/run/netns")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list network namespaces: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

// removeNetns SIGKILLs every process in ns (we started them all), deletes
// the host veth, the namespace and its /etc/netns folder. Missing pieces are
// not errors.
func removeNetns(ctx context.Context, ns string) error {
	var errs []error
	if netnsExists(ns) {
		if out, err := run(ctx, "", "ip", "netns", "pids", ns); err == nil {
			for _, f := range strings.Fields(out) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
	if v := vethName(ns); linkExists(v) {
		errs = append(errs, ipBatch(ctx, "", "link del "+v))
	}
	if netnsExists(ns) {
		errs = append(errs, ipBatch(ctx, "", "netns del "+ns))
	}
	errs = append(errs, os.RemoveAll(filepath.Join("/etc/netns", ns)))
	return errors.Join(errs...)
}

// OwnsLink reports whether the network link name is one the pod network
// makes (a bridge nvcfbr* or a veth nvcfv*).
func OwnsLink(name string) bool {
	return strings.HasPrefix(name, "nvcfbr") || strings.HasPrefix(name, "nvcfv")
}
