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

// MaxClusters is how many clusters the plan has room for.
const MaxClusters = 80

// Cluster is the addresses of cluster i.
type Cluster struct {
	Index int
	Name  string
}

// For returns the plan of the cluster at index i called name.
func For(i int, name string) Cluster { return Cluster{Index: i, Name: name} }

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

// ExternalDNS is where the agent's external DNS serves (UDP and TCP); the
// one place this address is written down.
var ExternalDNS = netip.MustParseAddrPort("127.0.0.88:53")

// ClusterDomain is every cluster's DNS domain.
const ClusterDomain = "cluster.local"
