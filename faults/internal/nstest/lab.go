// Package nstest builds, for tests, a miniature of the embedded provider's
// host network inside network namespaces the test owns: a "host"
// namespace with one bridge-like gateway per cluster and load-balancer
// addresses on its loopback, and one "pod" namespace per cluster. Nothing
// touches the machine's own namespace. Tests skip when not root or when
// ip/nft are missing.
package nstest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/nvcf/conformance/faults/internal/netnsx"
)

// Cluster is one cluster of the lab.
type Cluster struct {
	// PodNetns is the namespace of the cluster's single pod.
	PodNetns string
	// Pods is the pod range, Gateway the host's address on it, Pod the pod's.
	Pods    netip.Prefix
	Gateway netip.Addr
	Pod     netip.Addr
	// LBs is the load-balancer range; LB an address of it on the host's lo.
	LBs netip.Prefix
	LB  netip.Addr
}

// Lab is a host namespace with clusters around it.
type Lab struct {
	// Host is the namespace that plays the machine.
	Host     string
	Clusters []Cluster
}

// Skip skips t unless namespaces and nftables can be used here.
func Skip(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network-namespace tests need root (they create namespaces and nftables rules); skipped")
	}
	for _, bin := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (make deps installs iproute2 and nftables); skipped", bin)
		}
	}
	hostlock.Shared(t)
}

func sh(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// New builds a lab of n clusters (n ≤ 8). Cluster i has pods in
// 198.18.(210+i).0/24 (gateway .1, pod .2) and load balancer
// 198.19.(210+i).1. Everything is deleted when the test ends.
func New(t testing.TB, n int) *Lab {
	t.Helper()
	return NewAt(t, n, 210, 210)
}

// NewAt is New with cluster i's pods in 198.18.(podBase+i).0/24 and load
// balancer 198.19.(lbBase+i).1; NewAt(t, n, 10, 100) mirrors the embedded
// provider's address plan inside the lab's own namespaces.
func NewAt(t testing.TB, n, podBase, lbBase int) *Lab {
	t.Helper()
	Skip(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	lab := &Lab{Host: "nvcft-" + id + "-h"}
	sh(t, "ip", "netns", "add", lab.Host)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", lab.Host).Run() })
	sh(t, "ip", "-n", lab.Host, "link", "set", "lo", "up")
	for i := range n {
		c := Cluster{
			PodNetns: fmt.Sprintf("nvcft-%s-p%d", id, i),
			Pods:     netip.MustParsePrefix(fmt.Sprintf("198.18.%d.0/24", podBase+i)),
			Gateway:  netip.MustParseAddr(fmt.Sprintf("198.18.%d.1", podBase+i)),
			Pod:      netip.MustParseAddr(fmt.Sprintf("198.18.%d.2", podBase+i)),
			LBs:      netip.MustParsePrefix(fmt.Sprintf("198.19.%d.0/24", lbBase+i)),
			LB:       netip.MustParseAddr(fmt.Sprintf("198.19.%d.1", lbBase+i)),
		}
		hostIf, podIf := fmt.Sprintf("nft%sh%d", id, i), fmt.Sprintf("nft%sp%d", id, i)
		sh(t, "ip", "netns", "add", c.PodNetns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", c.PodNetns).Run() })
		sh(t, "ip", "link", "add", hostIf, "netns", lab.Host, "type", "veth", "peer", "name", podIf, "netns", c.PodNetns)
		sh(t, "ip", "-n", lab.Host, "addr", "add", c.Gateway.String()+"/24", "dev", hostIf)
		sh(t, "ip", "-n", lab.Host, "link", "set", hostIf, "up")
		sh(t, "ip", "-n", lab.Host, "addr", "add", c.LB.String()+"/32", "dev", "lo")
		sh(t, "ip", "-n", c.PodNetns, "link", "set", "lo", "up")
		sh(t, "ip", "-n", c.PodNetns, "addr", "add", c.Pod.String()+"/24", "dev", podIf)
		sh(t, "ip", "-n", c.PodNetns, "link", "set", podIf, "up")
		sh(t, "ip", "-n", c.PodNetns, "route", "add", "default", "via", c.Gateway.String())
		lab.Clusters = append(lab.Clusters, c)
	}
	sh(t, "ip", "netns", "exec", lab.Host, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	// The machine tracks connections from the start (the provider's and
	// the firewall's rules use conntrack), so flows exist before a fault's
	// first rule; a ct rule makes the lab's host namespace track them too.
	sh(t, "ip", "netns", "exec", lab.Host, "nft",
		"add table inet nvcft_track; add chain inet nvcft_track out { type filter hook output priority 0; policy accept; }; add rule inet nvcft_track out ct state new accept")
	return lab
}

// Dialer dials from a namespace.
func Dialer(ns string) netnsx.Dialer { return netnsx.Dialer{Netns: ns} }
