package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// cniConfig is the pod network of one node: a bridge with addresses from
// the node's pod CIDR (host-local), the node as the pods' gateway, and port
// mappings. No masquerading: pods reach pods and nodes by their own
// addresses, over the routes setupPodNetwork adds between nodes.
func cniConfig(podCIDR netip.Prefix) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "nvcf-bridge",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "nvcf0", "isGateway": true, "isDefaultGateway": true,
				"ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": podCIDR.String()}}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
}

// nodeNet is a node's address on the nodes' network and its pod CIDR.
type nodeNet struct {
	node    nodes.Node
	addr    netip.Addr
	podCIDR netip.Prefix
}

// setupPodNetwork waits for the controller manager to give every node its
// pod CIDR, writes each node's CNI configuration, and routes every node's
// pod CIDR through that node on all the others.
func setupPodNetwork(ctx context.Context, cs kubernetes.Interface, kindNodes []nodes.Node) ([]nodeNet, error) {
	want := map[string]nodes.Node{}
	for _, n := range kindNodes {
		want[n.String()] = n
	}
	var nets []nodeNet
	for {
		nets = nets[:0]
		nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, k := range nl.Items {
				n, ok := want[k.Name]
				if !ok || k.Spec.PodCIDR == "" {
					continue
				}
				cidr, err := netip.ParsePrefix(k.Spec.PodCIDR)
				if err != nil {
					return nil, fmt.Errorf("node %s: pod CIDR %q: %w", k.Name, k.Spec.PodCIDR, err)
				}
				v4, _, err := n.IP()
				if err != nil {
					return nil, fmt.Errorf("node %s: address: %w", k.Name, err)
				}
				addr, err := netip.ParseAddr(v4)
				if err != nil {
					return nil, fmt.Errorf("node %s: address %q: %w", k.Name, v4, err)
				}
				nets = append(nets, nodeNet{node: n, addr: addr, podCIDR: cidr})
			}
		}
		if len(nets) == len(want) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d nodes to register with a pod CIDR (have %d): %w", len(want), len(nets), ctx.Err())
		case <-time.After(time.Second):
		}
	}
	for _, a := range nets {
		conf, err := cniConfig(a.podCIDR)
		if err != nil {
			return nil, err
		}
		if err := nodeutils.WriteFile(a.node, "/etc/cni/net.d/10-nvcf-bridge.conflist", string(conf)); err != nil {
			return nil, fmt.Errorf("node %s: write the CNI configuration: %w", a.node, err)
		}
		for _, b := range nets {
			if a.node == b.node {
				continue
			}
			var out strings.Builder
			cmd := a.node.CommandContext(ctx, "ip", "route", "replace", b.podCIDR.String(), "via", b.addr.String())
			cmd.SetStderr(&out)
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("node %s: route %s via %s (%s): %w: %s", a.node, b.podCIDR, b.addr, b.node, err, out.String())
			}
		}
	}
	return nets, nil
}
