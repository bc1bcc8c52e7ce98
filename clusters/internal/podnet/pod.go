package podnet

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PodSpec is what the network needs to know of a pod.
type PodSpec struct {
	// UID is the pod's UID; its first 8 characters name the namespace.
	UID string
	// ResolvConf and Hosts become /etc/netns/<ns>/resolv.conf and hosts,
	// which `ip netns exec` bind-mounts over /etc/resolv.conf and /etc/hosts.
	// Empty means the file is not written.
	ResolvConf, Hosts string
}

// Pod is an attached pod: its namespace, address and host-side veth.
type Pod struct {
	UID   string
	NetNS string
	IP    netip.Addr
	Veth  string
}

// NetnsName is the namespace name of a pod of the cluster with index and
// name: nvcf-<index>-<cluster>-<uid8>. The index keeps apart the clusters
// of environments that run side by side under the same names.
func NetnsName(index int, cluster, uid string) string {
	short := strings.ReplaceAll(uid, "-", "")
	if len(short) > 8 {
		short = short[:8]
	}
	return NetnsPrefix(index, cluster) + short
}

// NetnsPrefix begins the name of every pod namespace of the cluster with
// index and name.
func NetnsPrefix(index int, cluster string) string {
	return "nvcf-" + strconv.Itoa(index) + "-" + cluster + "-"
}

// vethName is the host side of a pod's veth: "nvcfv" + 8 hex digits of a
// hash of the namespace name (15 characters is the kernel's limit).
func vethName(netns string) string {
	h := fnv.New32a()
	h.Write([]byte(netns))
	return fmt.Sprintf("nvcfv%08x", h.Sum32())
}

// AddPod creates the pod's namespace, joins it to the bridge and gives it
// an address. It is idempotent per UID: a namespace left by a previous agent
// is rebuilt with the same address (a pod's IP never changes).
func (c *Cluster) AddPod(ctx context.Context, spec PodSpec) (Pod, error) {
	if spec.UID == "" {
		return Pod{}, errors.New("podnet: PodSpec.UID is required")
	}
	ns := NetnsName(c.cfg.Index, c.cfg.Name, spec.UID)
	ip, err := c.ipam.Allocate(ns)
	if err != nil {
		return Pod{}, err
	}
	p := Pod{UID: spec.UID, NetNS: ns, IP: ip, Veth: vethName(ns)}
	if netnsExists(ns) || linkExists(p.Veth) {
		c.log.Info("rebuilding pod namespace left by an earlier run", "netns", ns)
		if err := removeNetns(ctx, ns); err != nil {
			return Pod{}, err
		}
	}
	if err := writeNetnsFiles(ns, spec); err != nil {
		return Pod{}, err
	}
	fail := func(err error) (Pod, error) {
		_ = removeNetns(context.WithoutCancel(ctx), ns)
		_ = c.ipam.Release(ns)
		return Pod{}, fmt.Errorf("attach pod %s (netns %s): %w", spec.UID, ns, err)
	}
	if err := ipBatch(ctx, "",
		"netns add "+ns,
		fmt.Sprintf("link add %s type veth peer name eth0 netns %s", p.Veth, ns),
		fmt.Sprintf("link set %s master %s up", p.Veth, c.Bridge()),
	); err != nil {
		return fail(err)
	}
	if err := ipBatch(ctx, ns,
		"link set lo up",
		fmt.Sprintf("addr add %s/24 dev eth0", ip),
		"link set eth0 up",
		"route add default via "+c.Gateway().String(),
	); err != nil {
		return fail(err)
	}
	c.mu.Lock()
	c.pods[spec.UID] = p
	c.mu.Unlock()
	c.log.Debug("pod attached", "netns", ns, "ip", ip, "veth", p.Veth)
	return p, nil
}

// RemovePod kills whatever still runs in the pod's namespace, deletes the
// namespace, its veth and files, and frees its address. Removing an unknown
// pod is a no-op.
func (c *Cluster) RemovePod(ctx context.Context, uid string) error {
	ns := NetnsName(c.cfg.Index, c.cfg.Name, uid)
	err := removeNetns(ctx, ns)
	c.mu.Lock()
	delete(c.pods, uid)
	c.mu.Unlock()
	return errors.Join(err, c.ipam.Release(ns))
}

func writeNetnsFiles(ns string, spec PodSpec) error {
	dir := filepath.Join("/etc/netns", ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for name, content := range map[string]string{"resolv.conf": spec.ResolvConf, "hosts": spec.Hosts} {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s for netns %s: %w", name, ns, err)
		}
	}
	return nil
}
