package agent

import (
	"context"
	"log/slog"
	"net/netip"
	"path/filepath"

	"github.com/nvcf/conformance/clusters/internal/extdns"
	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// Hooks run the parts of a cluster that are not control-plane processes:
// its nodes (process kubelets) and its load-balancer controller. Each runs
// until ctx is done and then stops what it started.
type Hooks struct {
	Node func(ctx context.Context, n Node) error
	LB   func(ctx context.Context, l LB) error
}

// Node is what a node runner gets.
type Node struct {
	// Kubeconfig and Context reach the cluster's API server as the node
	// (system:node:<Name>).
	Kubeconfig, Context string
	Name                string
	Network             *podnet.Cluster
	// DNS is the cluster's CoreDNS address (pods' resolv.conf).
	DNS    netip.Addr
	Images map[string]string
	// Dir holds the node's pod folders and container logs.
	Dir string
	// Port is the kubelet API port on the bridge address; CertFile and
	// KeyFile serve it (IP SAN: the bridge address); ClientCAFile verifies
	// the API server's kubelet client certificate.
	Port                            int
	CertFile, KeyFile, ClientCAFile string
	Log                             *slog.Logger
}

// LB is what a load-balancer controller runner gets.
type LB struct {
	Kubeconfig, Context string
	ClusterIndex        int
	// DNS is the external DNS where hostnames are registered.
	DNS *extdns.Server
	Log *slog.Logger
}

func (a *agent) runNode(ctx context.Context, c *cluster, n int) error {
	name := c.plan.NodeName(n)
	return a.hooks.Node(ctx, Node{
		Kubeconfig: c.cp.NodeKubeconfigs[n], Context: c.plan.Name, Name: name, Network: c.net,
		DNS: c.plan.BridgeIP(), Images: a.cfg.Images, Dir: filepath.Join(a.dir, c.plan.Name, "nodes", name),
		Port: c.plan.KubeletPort(n), CertFile: c.cp.PKI.NodeCerts[n], KeyFile: c.cp.PKI.NodeKeys[n],
		ClientCAFile: c.cp.PKI.CACert, Log: a.log.With("node", name),
	})
}

func (a *agent) runLB(ctx context.Context, c *cluster) error {
	return a.hooks.LB(ctx, LB{
		Kubeconfig: c.cp.LBKubeconfig, Context: c.plan.Name, ClusterIndex: c.plan.Index, DNS: a.dns,
		Log: a.log.With("cluster", c.plan.Name, "component", "lb"),
	})
}
