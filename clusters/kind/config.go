package kind

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/kind/internal/nodeimage"
)

// The address plan, inside the test range and clear of the embedded
// provider's (198.18.10-99.0/24 pods, 198.19.10-189.0/24 services and load
// balancers) and of the Docker daemon's (198.18.200.0/24 docker0,
// 198.18.208.0/20 user networks): the kind nodes' Docker network, and per
// cluster a /22 of pods (a /24 per node) and a /24 of services.
var (
	NodeNetwork = netip.MustParsePrefix("198.18.224.0/22")
	podBase     = netip.MustParseAddr("198.19.192.0") // + 4·i /22
	serviceBase = netip.MustParseAddr("198.19.224.0") // + i /24
)

// NetworkName is the Docker network every kind cluster of the harness
// joins (kind honours an existing network of the name it is given).
const NetworkName = "nvcf-kind"

// MaxClusters is how many clusters one environment can have: the pod and
// service ranges above hold eight.
const MaxClusters = 8

// maxNodes is how many nodes a cluster can have: a /24 each in its /22.
const maxNodes = 4

func nth(base netip.Addr, third int) netip.Addr {
	b := base.As4()
	b[2] += byte(third)
	return netip.AddrFrom4(b)
}

// addrAt is the n-th address of p (n < 256).
func addrAt(p netip.Prefix, n int) netip.Addr {
	b := p.Addr().As4()
	b[3] += byte(n)
	return netip.AddrFrom4(b)
}

// plan is one cluster's ranges.
type plan struct {
	Pods     netip.Prefix `json:"pods"`
	Services netip.Prefix `json:"services"`
}

func planOf(i int) plan {
	return plan{
		Pods:     netip.PrefixFrom(nth(podBase, 4*i), 22),
		Services: netip.PrefixFrom(nth(serviceBase, i), 24),
	}
}

// kindName is the kind cluster of a topology cluster: the environment's
// name first, so that two environments never share one.
func kindName(env, cluster string) string { return env + "-" + cluster }

// kindConfig is the kind configuration of the i-th cluster of spec: one
// control-plane node and the rest workers; no default CNI (the provider
// installs a bridge per node); kubeadm told the images' repository and the
// etcd and CoreDNS tags built into the node image; the kubelet allowed on
// cgroup v1 and syncing its pods every 5 s.
func kindConfig(spec clusters.Spec, i int) (*v1alpha4.Cluster, error) {
	c := spec.Clusters[i]
	if c.Nodes > maxNodes {
		return nil, fmt.Errorf("cluster %q: %d nodes; the kind provider gives each cluster at most %d", c.Name, c.Nodes, maxNodes)
	}
	p := planOf(i)
	v := nodeimage.Pinned()
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Networking: v1alpha4.Networking{
			IPFamily:          v1alpha4.IPv4Family,
			APIServerAddress:  "127.0.0.1",
			PodSubnet:         p.Pods.String(),
			ServiceSubnet:     p.Services.String(),
			DisableDefaultCNI: true,
			KubeProxyMode:     v1alpha4.IPTablesProxyMode,
		},
		KubeadmConfigPatches: []string{
			fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
imageRepository: %s
etcd:
  local:
    imageTag: %s
dns:
  imageTag: %s
`, nodeimage.Repository, v.Etcd, v.CoreDNS),
			`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
syncFrequency: 5s
`,
		},
	}
	cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.ControlPlaneRole})
	for range c.Nodes - 1 {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	return cfg, nil
}

// configHash identifies what a kind cluster was made from: its
// configuration and the node image.
func configHash(cfg *v1alpha4.Cluster, image string) (string, error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append(append(b, '\n'), image...))
	return hex.EncodeToString(h[:8]), nil
}
