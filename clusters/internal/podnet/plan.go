package podnet

import (
	"fmt"
	"net/netip"
)

// The address plan of docs/architecture.md: cluster i (0-based, topology
// order) owns these ranges. These are the plan's limits, for every user.
const (
	// MaxClusters bounds i so every range stays valid: cluster i's service
	// range 198.19.(10+i).0/24 must stay below the first load-balancer
	// pool, 198.19.100.0/24.
	MaxClusters = 90
	// EnvironmentClusters is how many indexes, [0, EnvironmentClusters),
	// the embedded provider's environments take, all of them together.
	// The indexes above belong to root tests that make networks of their
	// own (nvcfbr85…89), so that those never take a running environment's
	// bridge or ranges.
	EnvironmentClusters = 80
)

// TestRange is the whole pod range; nothing in it leaves the machine.
var TestRange = netip.MustParsePrefix("198.18.0.0/15")

// HarnessRange holds every service and load-balancer address (198.19.0.0/16).
var HarnessRange = netip.MustParsePrefix("198.19.0.0/16")

func v4(a, b, c, d int) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(a), byte(b), byte(c), byte(d)})
}

// GatewayOf is cluster i's bridge address, 198.18.(10+i).1; the cluster's
// CoreDNS and its apiserver's advertise address live there too.
func GatewayOf(i int) netip.Addr { return v4(198, 18, 10+i, 1) }

// PodPrefix is cluster i's pod range, 198.18.(10+i).0/24.
func PodPrefix(i int) netip.Prefix { return netip.PrefixFrom(v4(198, 18, 10+i, 0), 24) }

// ServicePrefix is cluster i's service cluster-IP range, 198.19.(10+i).0/24.
func ServicePrefix(i int) netip.Prefix { return netip.PrefixFrom(v4(198, 19, 10+i, 0), 24) }

// LBPrefix is cluster i's load-balancer pool, 198.19.(100+i).0/24.
func LBPrefix(i int) netip.Prefix { return netip.PrefixFrom(v4(198, 19, 100+i, 0), 24) }

// APIServerPort is cluster i's kube-apiserver port on its bridge address,
// 6443+i; the nftables table admits it only from lo and our bridges.
func APIServerPort(i int) int { return apiServerPortBase + i }

const apiServerPortBase = 6443

// BridgeName is cluster i's bridge, nvcfbr<i>.
func BridgeName(i int) string { return fmt.Sprintf("nvcfbr%d", i) }

// BridgeMAC is cluster i's bridge address, locally administered. A bridge
// without one set takes the lowest MAC of its ports, so a pod joining or
// leaving could change the gateway's MAC under the other pods, whose ARP
// caches then point at nothing for half a minute.
func BridgeMAC(i int) string { return fmt.Sprintf("02:6e:76:63:62:%02x", i) }

func checkIndex(i int) error {
	if i < 0 || i >= MaxClusters {
		return fmt.Errorf("cluster index %d out of range [0,%d): the address plan has room for %d clusters", i, MaxClusters, MaxClusters)
	}
	return nil
}
