package local

import (
	"context"

	"github.com/nvcf/conformance/clusters/internal/lb"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
	"github.com/nvcf/conformance/clusters/local/internal/kubelet"
)

// runNode runs one node's process kubelet.
func runNode(ctx context.Context, n agent.Node) error {
	return kubelet.Run(ctx, kubelet.Config{
		Kubeconfig: n.Kubeconfig, Context: n.Context, NodeName: n.Name, Network: n.Network,
		DNS: n.DNS, Images: n.Images, Dir: n.Dir, KubeletPort: n.Port,
		TLS: kubelet.TLS{CertFile: n.CertFile, KeyFile: n.KeyFile, ClientCAFile: n.ClientCAFile},
		Log: n.Log,
	})
}

// runLB runs the cluster's load-balancer controller.
func runLB(ctx context.Context, l agent.LB) error {
	return lb.Run(ctx, lb.Config{
		Kubeconfig: l.Kubeconfig, Context: l.Context, ClusterIndex: l.ClusterIndex, DNS: l.DNS, Log: l.Log,
	})
}
