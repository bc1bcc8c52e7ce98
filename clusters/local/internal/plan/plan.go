// Package plan is the embedded provider's address plan: which bridge, pod
// range, service range, load-balancer pool and ports cluster i (its 0-based
// position in the spec) owns. Every part of the provider derives its
// addresses here so that they cannot drift apart (see docs/provider-local.md);
// the network ranges themselves are podnet's, which creates them.
package plan

import (
	"fmt"
	"net/netip"

	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// Cluster is the addresses of cluster i.
type Cluster struct {
	Index int
	Name  string
	// Env is the environment the cluster belongs to.
	Env Env
}

// For returns the plan of the cluster at index i called name, in an
// environment whose clusters start at index 0.
func For(i int, name string) Cluster { return Env{}.Cluster(i, name) }

// Env is an environment's place in the plan. Environments run side by side
// when their clusters' indexes do not overlap: the environment's i-th
// cluster (0-based, spec order) has index Base+i, and everything the
// environment binds derives from those indexes and Base.
type Env struct {
	Base int
}

// Cluster returns the plan of the environment's i-th cluster called name.
func (e Env) Cluster(i int, name string) Cluster {
	return Cluster{Index: e.Base + i, Name: name, Env: e}
}

// ExternalDNS is where the environment's external DNS serves (UDP and
// TCP): 127.0.0.88 for Base 0, one address further for each index of Base
// (the one place these addresses are written down).
func (e Env) ExternalDNS() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(88 + e.Base)}), 53)
}

// Bridge is the name of the cluster's bridge in the host namespace.
func (c Cluster) Bridge() string { return podnet.BridgeName(c.Index) }

// BridgeIP is the bridge's address: the pods' gateway, the node address and
// the listen address of the cluster's CoreDNS.
func (c Cluster) BridgeIP() netip.Addr { return podnet.GatewayOf(c.Index) }

// ClusterDNS is where the cluster's CoreDNS serves: the bridge address,
// port 53.
func (c Cluster) ClusterDNS() netip.AddrPort { return netip.AddrPortFrom(c.BridgeIP(), 53) }

// PodPrefix is the cluster's pod range (the bridge holds .1).
func (c Cluster) PodPrefix() netip.Prefix { return podnet.PodPrefix(c.Index) }

// ServicePrefix is the service cluster-IP range.
func (c Cluster) ServicePrefix() netip.Prefix { return podnet.ServicePrefix(c.Index) }

// KubernetesServiceIP is the cluster IP of the default/kubernetes Service.
func (c Cluster) KubernetesServiceIP() netip.Addr { return c.ServicePrefix().Addr().Next() }

// LBPool is the range load-balancer addresses come from.
func (c Cluster) LBPool() netip.Prefix { return podnet.LBPrefix(c.Index) }

// APIServerPort is the kube-apiserver's port on the bridge address.
func (c Cluster) APIServerPort() int { return podnet.APIServerPort(c.Index) }

// EtcdClientPort and EtcdPeerPort are etcd's ports on 127.0.0.1.
func (c Cluster) EtcdClientPort() int { return 12379 + c.Index }

// EtcdPeerPort is etcd's peer port on 127.0.0.1 (single member; unused but bound).
func (c Cluster) EtcdPeerPort() int { return 12479 + c.Index }

// NodeName is the name of the cluster's n-th (0-based) node.
func (c Cluster) NodeName(n int) string { return fmt.Sprintf("%s-node-%d", c.Name, n) }

// KubeletPort is the kubelet API port of node n on the bridge address.
func (c Cluster) KubeletPort(n int) int { return 10250 + 10*c.Index + n }

// ClusterDomain is every cluster's DNS domain.
const ClusterDomain = "cluster.local"
