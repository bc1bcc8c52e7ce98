package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
)

// echoPort is where the echo container of a Pylon pod listens (the
// manifests' pylon template).
const echoPort = 8080

// Latency compares invocations through the reverse tunnel with direct
// calls to the echo server behind it.
type Latency struct {
	Requests             int
	TunnelURL, DirectURL string
	Tunnel, Direct       Percentiles
}

// Percentiles of one path's latencies.
type Percentiles struct{ P50, P99, Mean time.Duration }

// Ratio50 and Ratio99 are the tunnel's percentile over the direct one's.
func (l *Latency) Ratio50() float64 { return float64(l.Tunnel.P50) / float64(l.Direct.P50) }

// Ratio99 is the tunnel's p99 over the direct p99.
func (l *Latency) Ratio99() float64 { return float64(l.Tunnel.P99) / float64(l.Direct.P99) }

// timeInvocations times n chat completions of the echo model through the
// first Stargate pod of the first stargate cluster (its HTTP port, on the
// pod IP) and n straight to the echo container of the base Pylon pod,
// interleaved so that both see the same machine load.
func timeInvocations(ctx context.Context, env *clusters.Environment, topo *topology.Topology, n int) (*Latency, error) {
	sg, wk := topo.ByRole(topology.RoleStargate), topo.ByRole(topology.RoleWorkers)
	if len(sg) == 0 || len(wk) == 0 {
		return nil, fmt.Errorf("the topology has no stargate or no workers cluster")
	}
	sgIP, err := podIP(ctx, env, sg[0].Name, manifests.StargateName)
	if err != nil {
		return nil, err
	}
	echoIP, err := podIP(ctx, env, wk[0].Name, manifests.PylonName)
	if err != nil {
		return nil, err
	}
	l := &Latency{Requests: n,
		TunnelURL: "http://" + net.JoinHostPort(sgIP, strconv.Itoa(manifests.HTTPPort)),
		DirectURL: "http://" + net.JoinHostPort(echoIP, strconv.Itoa(echoPort))}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	// Streaming, as a real Pylon forwards chat completions only with
	// "stream": true; the direct calls stream too, so both paths carry the
	// same answer (timeChat, as --tunnel-vs-real times).
	calls := 0
	call := func(url string) (time.Duration, error) {
		calls++
		return timeChat(ctx, client, url, "bench-"+strconv.Itoa(calls))
	}
	var tun, dir []time.Duration
	for i := range n + n/10 { // the first tenth warms connections up and is not counted
		t, err := call(l.TunnelURL)
		if err != nil {
			return nil, err
		}
		d, err := call(l.DirectURL)
		if err != nil {
			return nil, err
		}
		if i >= n/10 {
			tun, dir = append(tun, t), append(dir, d)
		}
	}
	l.Tunnel, l.Direct = percentiles(tun), percentiles(dir)
	return l, nil
}

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	return Percentiles{P50: at(0.50), P99: at(0.99), Mean: sum / time.Duration(len(d))}
}

// podIP is the IP of the first running pod of component name in cluster
// (base objects only, not a Pylon variant's).
func podIP(ctx context.Context, env *clusters.Environment, cluster, name string) (string, error) {
	kc, err := env.Client(cluster)
	if err != nil {
		return "", err
	}
	pods, err := kc.CoreV1().Pods(manifests.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: manifests.NameLabel + "=" + name + "," + manifests.InstanceLabel + "=" + name})
	if err != nil {
		return "", fmt.Errorf("list %s pods in %s: %w", name, cluster, err)
	}
	var ips []string
	for _, p := range pods.Items {
		if p.Status.Phase == "Running" && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			ips = append(ips, p.Status.PodIP)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("no running %s pod in %s/%s (the matrix leaves its last cell deployed; did it deploy one?)", name, cluster, manifests.Namespace)
	}
	slices.Sort(ips)
	return ips[0], nil
}
