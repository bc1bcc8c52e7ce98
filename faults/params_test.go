package faults

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/stretchr/testify/require"
)

// testEnv's clusters have the embedded provider's address plan.
var testEnv = ParamEnv{
	Environment: &clusters.Environment{
		Kubeconfig: "/state/kubeconfig",
		DNS:        netip.MustParseAddrPort("127.0.0.88:53"),
		Clusters:   []clusters.ClusterInfo{planned(0, "region-a"), planned(1, "region-b"), planned(2, "workers")},
	},
	LookupLB: func(_ context.Context, cluster, ns, svc string, port uint16) (netip.AddrPort, error) {
		if port == 0 {
			port = 50071
		}
		return netip.AddrPortFrom(netip.MustParseAddr("198.19.101.3"), port), nil
	},
}

// planned is the cluster at position i as the embedded provider lays it out.
func planned(i int, name string) clusters.ClusterInfo {
	gw := netip.AddrFrom4([4]byte{198, 18, byte(10 + i), 1})
	return clusters.ClusterInfo{Name: name, Context: name, Network: clusters.Network{
		Pods: netip.PrefixFrom(gw, 24).Masked(), Gateway: gw, DNS: netip.AddrPortFrom(gw, 53),
		LoadBalancers: netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 19, byte(100 + i), 0}), 24),
	}}
}

func TestFromParamsPartition(t *testing.T) {
	f, err := FromParams(context.Background(), kindPartition, "workers->region-b", map[string]string{"oneway": "true", "name": "split"}, testEnv)
	require.NoError(t, err)
	p := f.Action.(partition)
	require.Equal(t, "198.18.12.0/24", p.A.Pods.String())
	require.Equal(t, "198.19.101.0/24", p.B.LBs.String())
	require.True(t, p.OneWay)
	require.Equal(t, "split", f.Name)
	require.Equal(t, "workers->region-b", f.Target.String())
}

func TestFromParamsUDPViaService(t *testing.T) {
	f, err := FromParams(context.Background(), kindUDP, "workers->region-b/nvcf/stargate-quic:50072",
		map[string]string{"loss": "20%", "burst": "4", "delay": "100ms", "jitter": "20ms", "dir": "up", "seed": "3"}, testEnv)
	require.NoError(t, err)
	u := f.Action.(UDPFault)
	require.Equal(t, "198.19.101.3:50072", u.Path.To.String())
	require.Equal(t, "198.18.12.1", u.Path.Gateway.String())
	require.InDelta(t, 0.2, u.Upstream.Burst.Rate(), 1e-9)
	require.Equal(t, 100*time.Millisecond, u.Upstream.Delay)
	require.Equal(t, Impairment{}, u.Downstream)
	require.Equal(t, uint64(3), u.Seed)
}

func TestFromParamsTCPAndErrors(t *testing.T) {
	f, err := FromParams(context.Background(), kindTCP, "region-a->198.19.101.3:50071", map[string]string{"latency": "50ms", "reset": "2s"}, testEnv)
	require.NoError(t, err)
	tf := f.Action.(tcpFault)
	require.Len(t, tf.Upstream, 2)
	require.Len(t, tf.Downstream, 2)

	for _, c := range []struct {
		kind   Kind
		target string
		kv     map[string]string
		want   string
	}{
		{kindTCP, "region-a->198.19.101.3:50071", map[string]string{"latncy": "5ms"}, "unknown params latncy"},
		{kindUDP, "nowhere->1.2.3.4:5", nil, `cluster "nowhere" is not in the environment`},
		{kindUDP, "region-a->198.19.101.3:50072", map[string]string{"loss": "lots"}, "want a number"},
		{kindPartition, "region-a", nil, "want FROM->TO"},
		{kindScale, "region-a/nvcf/statefulset/stargate", nil, "replicas=N is required"},
		{kindPodDelete, "region-a/nvcf", nil, "selector"},
		{"netem", "x", nil, "unknown fault kind"},
	} {
		_, err := FromParams(context.Background(), c.kind, c.target, c.kv, testEnv)
		require.ErrorContains(t, err, c.want, "%s %s", c.kind, c.target)
	}
}

func TestFromParamsObjects(t *testing.T) {
	f, err := FromParams(context.Background(), kindScale, "region-a/nvcf/statefulset/stargate", map[string]string{"replicas": "1"}, testEnv)
	require.NoError(t, err)
	s := f.Action.(scale)
	require.Equal(t, scale{Cluster: Cluster{Kubeconfig: "/state/kubeconfig", Context: "region-a"}, Namespace: "nvcf", Workload: "StatefulSet", Name: "stargate", Replicas: 1}, s)

	f, err = FromParams(context.Background(), kindPodCrash, "region-b/nvcf", map[string]string{"selector": "app.kubernetes.io/name=stargate", "count": "2"}, testEnv)
	require.NoError(t, err)
	require.Equal(t, 2, f.Action.(podCrash).Count)
	require.True(t, f.Action.(podCrash).OnHost, "the embedded provider's clusters have an address plan: their pods run here")

	f, err = FromParams(context.Background(), kindDNS, "stargate.region-a.nvcf.test", map[string]string{"mode": "spoof", "addr": "198.19.101.9", "pods": "workers"}, testEnv)
	require.NoError(t, err)
	d := f.Action.(DNSFault)
	require.Len(t, d.Intercepts, 2)
	require.Equal(t, "127.0.0.88:53", d.Intercepts[0].Server.String())
	require.Equal(t, "198.18.12.1:53", d.Intercepts[1].Server.String())
}

// TestFromParamsOnTheProviderPlan injects what `harness fault inject --kind
// partition --target 'workers->region-b'` builds, in a lab that mirrors the
// embedded provider's address plan inside its own namespaces.
func TestFromParamsOnTheProviderPlan(t *testing.T) {
	lab := nstest.NewAt(t, 3, 10, 100)
	workers, regionB := lab.Clusters[2], lab.Clusters[1]
	lb := netip.AddrPortFrom(regionB.LB, 50071)
	newTCPEcho(t, lab.Host, lb)
	env := testEnv
	env.Netns = lab.Host
	f, err := FromParams(context.Background(), kindPartition, "workers->region-b", nil, env)
	require.NoError(t, err)
	require.True(t, reachable(workers.PodNetns, lb, 10*time.Second))
	h := startT(context.Background(), t, f, nil)
	require.False(t, reachable(workers.PodNetns, lb, negative))
	require.NoError(t, h.Stop(context.Background()))
	require.True(t, reachable(workers.PodNetns, lb, 10*time.Second))

	// A UDP path fault built from words lands on the right gateway too.
	f, err = FromParams(context.Background(), kindUDP, "workers->"+netip.AddrPortFrom(regionB.LB, 50072).String(), map[string]string{"dup": "1"}, env)
	require.NoError(t, err)
	echo := newUDPEcho(t, lab.Host, netip.AddrPortFrom(regionB.LB, 50072))
	startT(context.Background(), t, f, nil)
	cl, err := netnsx.ListenPacket(workers.PodNetns, "udp", netip.AddrPortFrom(workers.Pod, 0).String(), false)
	require.NoError(t, err)
	defer cl.Close()
	_, err = cl.WriteTo([]byte("x"), udpAddr(netip.AddrPortFrom(regionB.LB, 50072)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return echo.count() == 2 }, 10*time.Second, time.Millisecond, "duplicated through the proxy on workers' gateway")
}
