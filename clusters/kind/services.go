package kind

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/corefile"
)

// Corefile is the CoreDNS configuration of a kind cluster: the shared
// policy (corefile.Render), forwarding the topology's domain to the external
// DNS on the host. It replaces kind's own, which forwards every other name
// to the node's resolver and would let a test's lookup leave the machine.
// CoreDNS runs in kubeadm's Deployment, so it keeps the probes and reloads
// its ConfigMap.
func Corefile(domain string) string {
	return corefile.Render(corefile.Config{
		ClusterDomain: "cluster.local", ExternalDomain: domain, ExternalDNS: ExternalDNS, Probes: true,
	})
}

// corefileAnnotation on CoreDNS's pod template carries a hash of the
// Corefile, so that a change rolls the pods instead of waiting for reload.
const corefileAnnotation = "nvcf-harness/corefile"

// configureDNS gives the cluster's CoreDNS Corefile(domain) and waits
// until its pods run it.
func configureDNS(ctx context.Context, cs kubernetes.Interface, domain string) error {
	want := Corefile(domain)
	cms := cs.CoreV1().ConfigMaps("kube-system")
	cm, err := cms.Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("CoreDNS configuration: %w", err)
	}
	if cm.Data["Corefile"] != want {
		cm.Data["Corefile"] = want
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("CoreDNS configuration: %w", err)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(want))
	tag := fmt.Sprintf("%x", h.Sum64())
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, corefileAnnotation, tag)
	if _, err := cs.AppsV1().Deployments("kube-system").Patch(ctx, "coredns", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("CoreDNS rollout: %w", err)
	}
	for {
		d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err == nil && d.Status.ObservedGeneration >= d.Generation && d.Spec.Replicas != nil &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas && available(d) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CoreDNS did not roll out its new configuration: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// route is one host route into a kind cluster.
type route struct {
	To  netip.Prefix `json:"to"`
	Via netip.Addr   `json:"via"`
}

// hostRoutes are the host's routes into a cluster: each node's pod CIDR
// through the node (replies to pods that dialled the host's load balancers
// and DNS, and the harness's own probes of pods), and the service range
// through the control-plane node, whose kube-proxy forwards it (the
// harness asks CoreDNS at its service address).
func hostRoutes(nodes []corev1.Node, services netip.Prefix) ([]route, error) {
	var out []route
	var cp netip.Addr
	for _, n := range nodes {
		ip, ok := clusters.NodeInternalIP(&n)
		if !ok || !NodeNetwork.Contains(ip) {
			return nil, fmt.Errorf("node %s: no InternalIP in %s", n.Name, NodeNetwork)
		}
		if n.Spec.PodCIDR == "" {
			return nil, fmt.Errorf("node %s: no pod CIDR yet", n.Name)
		}
		pods, err := netip.ParsePrefix(n.Spec.PodCIDR)
		if err != nil {
			return nil, fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, n.Spec.PodCIDR, err)
		}
		out = append(out, route{To: pods, Via: ip})
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			cp = ip
		}
	}
	if !cp.IsValid() {
		return nil, fmt.Errorf("no control-plane node among %d nodes", len(nodes))
	}
	return append(out, route{To: services, Via: cp}), nil
}

// addRoutes puts rs on the host, through the nodes' bridge.
func addRoutes(ctx context.Context, rs []route) error {
	for _, r := range rs {
		if out, err := exec.CommandContext(ctx, "ip", "route", "replace", r.To.String(), "via", r.Via.String(), "dev", BridgeName).CombinedOutput(); err != nil {
			return fmt.Errorf("host route %s via %s: %w: %s", r.To, r.Via, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// delRoutes removes rs from the host; one that is gone is no error.
func delRoutes(ctx context.Context, rs []route) error {
	for _, r := range rs {
		out, err := exec.CommandContext(ctx, "ip", "route", "del", r.To.String(), "via", r.Via.String(), "dev", BridgeName).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "No such process") && !strings.Contains(string(out), "Cannot find device") {
			return fmt.Errorf("host route %s via %s: %w: %s", r.To, r.Via, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
