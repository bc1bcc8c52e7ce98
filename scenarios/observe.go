package scenarios

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/wire/reason"
)

// Pod is a pod as scenarios observe it.
type Pod struct {
	Name  string
	IP    string
	Ready bool
}

// pylonStatusPort is where Pylon serves /status (its manifest's status port).
const pylonStatusPort = 9089

// Pods lists the pods of cluster matching selector, leaving out
// terminating ones, sorted by name.
func (e *Env) Pods(ctx context.Context, cluster, selector string) ([]Pod, error) {
	cs, err := e.Kube(cluster)
	if err != nil {
		return nil, err
	}
	list, err := cs.CoreV1().Pods(e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list pods %q in cluster %q: %w", selector, cluster, err)
	}
	var out []Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		out = append(out, Pod{Name: p.Name, IP: p.Status.PodIP, Ready: podReady(p)})
	}
	slices.SortFunc(out, func(a, b Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// StargatePods lists a region's ready Stargate pods.
func (e *Env) StargatePods(ctx context.Context, region string) ([]Pod, error) {
	all, err := e.Pods(ctx, region, deploy.StargateSelector().String())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(p Pod) bool { return !p.Ready || p.IP == "" }), nil
}

// PylonPod returns the running pod of the Pylon Deployment called name
// (the base "pylon" or a variant) in the workers cluster.
func (e *Env) PylonPod(ctx context.Context, name string) (Pod, error) {
	pods, err := e.Pods(ctx, e.Workers(), manifests.InstanceLabel+"="+name)
	if err != nil {
		return Pod{}, err
	}
	for _, p := range pods {
		if p.IP != "" {
			return p, nil
		}
	}
	return Pod{}, fmt.Errorf("no running pod of pylon %q in cluster %q yet", name, e.Workers())
}

// StargateStatus fetches a Stargate pod's /status (on its pod IP, reached
// from the host through the provider's bridges).
func (e *Env) StargateStatus(ctx context.Context, p Pod) (Doc, error) {
	return e.status(ctx, p, manifests.StatusPort)
}

// PylonStatus fetches the /status of the Pylon Deployment called name.
func (e *Env) PylonStatus(ctx context.Context, name string) (Doc, error) {
	p, err := e.PylonPod(ctx, name)
	if err != nil {
		return Doc{}, err
	}
	return e.status(ctx, p, pylonStatusPort)
}

func (e *Env) status(ctx context.Context, p Pod, port int) (Doc, error) {
	var v any
	url := "http://" + net.JoinHostPort(p.IP, strconv.Itoa(port)) + "/status"
	if err := e.Probe.GetJSON(ctx, url, &v); err != nil {
		return Doc{}, fmt.Errorf("status of pod %s: %w", p.Name, err)
	}
	return Doc{Pod: p.Name, v: v}, nil
}

// RegisteredOn returns the Stargate pods of region whose registry (their
// /status's inference_servers) holds the inference server id.
func (e *Env) RegisteredOn(ctx context.Context, region, serverID string) ([]string, error) {
	if byMetrics(e.Config) {
		return nil, notProven("which Stargate of "+region+" holds "+serverID, fmt.Sprintf("a real Stargate names no registrations by id (proof level %s)", ProofNone))
	}
	pods, err := e.StargatePods(ctx, region)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		d, err := e.StargateStatus(ctx, p)
		if err != nil {
			return nil, err
		}
		// Only the registrations count: the replica's tunnel sessions
		// name serverID too, and a tunnel outlives its registration until
		// QUIC's idle timeout.
		h, err := readHeld(region, p, d)
		if err != nil {
			return nil, err
		}
		if slices.Contains(h.Registrations, serverID) {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// transient reasons say "not yet" rather than "refused": a component that
// reports them may still succeed once its peers are up (a Stargate that is
// not ready yet, or was replaced by a rollout, say, or still holds the
// registration of a Pylon pod that is going away: duplicate-registration).
func transient(r reason.Reason) bool {
	switch r {
	case reason.None, reason.ConnectionRefused, reason.Timeout, reason.Unavailable, reason.Unknown,
		reason.NoSuchPod, reason.NotReady, reason.BackendUnreachable, reason.Replaced, reason.InputWorkLimitExceeded, reason.DuplicateRegistration:
		return true
	}
	return false
}
