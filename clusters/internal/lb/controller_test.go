package lb

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/extdns"
)

// The controller against client-go's fake clientset (the real apiserver
// path is the provider's e2e test). Addresses are in 127.0.0.0/8, which
// is on lo already, so the test needs no root; the forwarders, the
// external DNS and the status updates are the real ones.
func TestControllerServesLoadBalancerAndClusterIP(t *testing.T) {
	tcpBackend := tcpEcho(t, "pod")
	udpBackend := udpEcho(t, "pod")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "e2e",
			Annotations: map[string]string{clusters.ExternalHostnamesAnnotation: "echo.region-a.nvcf.test, quic.region-a.nvcf.test"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "127.0.77.10", Ports: []corev1.ServicePort{
			{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 50071},
			{Name: "quic", Protocol: corev1.ProtocolUDP, Port: 50072},
		}},
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "echo-abc", Namespace: "e2e", Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr("grpc"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr(int32(tcpBackend.Port()))},
			{Name: ptr("quic"), Protocol: ptr(corev1.ProtocolUDP), Port: ptr(int32(udpBackend.Port()))},
		},
	}
	client := fake.NewClientset(svc, slice)
	dns := extdns.New(nil, "nvcf.test")
	var mu sync.Mutex
	onLo := map[netip.Addr]bool{}
	track := func(on bool) func(context.Context, netip.Addr) error {
		return func(_ context.Context, a netip.Addr) error { mu.Lock(); onLo[a] = on; mu.Unlock(); return nil }
	}
	c := newController(Config{Pool: netip.MustParsePrefix("127.0.100.0/24"), DNS: dns, UDPIdleTimeout: time.Minute}.withLog(),
		client, track(true), track(false))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.run(ctx) }()

	lbAddr := netip.MustParseAddr("127.0.100.1")
	waitFor(t, "status.loadBalancer.ingress", func() bool {
		s, err := client.CoreV1().Services("e2e").Get(ctx, "echo", metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) == 1 && s.Status.LoadBalancer.Ingress[0].IP == lbAddr.String()
	})
	require.Equal(t, map[string][]netip.Addr{"echo.region-a.nvcf.test.": {lbAddr}, "quic.region-a.nvcf.test.": {lbAddr}}, dns.Records())
	mu.Lock()
	require.True(t, onLo[lbAddr])
	require.True(t, onLo[netip.MustParseAddr("127.0.77.10")])
	mu.Unlock()

	for _, addr := range []string{"127.0.100.1:50071", "127.0.77.10:50071"} {
		waitFor(t, "TCP through "+addr, func() bool { return tcpSays(addr) == "pod:hi" })
	}
	waitFor(t, "UDP through the LB", func() bool { return udpSays("127.0.100.1:50072") == "pod:hi" })

	// Endpoints gone: the listener stays, with no backend.
	slice.Endpoints[0].Conditions.Ready = ptr(false)
	_, err := client.DiscoveryV1().EndpointSlices("e2e").Update(ctx, slice, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, "no ready backend", func() bool { return tcpSays("127.0.100.1:50071") == "" })

	require.NoError(t, client.CoreV1().Services("e2e").Delete(ctx, "echo", metav1.DeleteOptions{}))
	waitFor(t, "teardown", func() bool { return len(dns.Records()) == 0 })
	mu.Lock()
	require.False(t, onLo[lbAddr], "the address leaves lo with its Service")
	mu.Unlock()
	_, err = net.DialTimeout("tcp", "127.0.100.1:50071", time.Second)
	require.Error(t, err, "listener closed")

	cancel()
	require.NoError(t, <-done)
}

func (c Config) withLog() Config {
	if c.Log == nil {
		c.Log = slogDiscard()
	}
	return c
}

func tcpSays(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(c, "hi\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return ""
	}
	return line[:len(line)-1]
}

func udpSays(addr string) string {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("hi")); err != nil {
		return ""
	}
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}

// With NodePorts, a LoadBalancer forwards to its NodePort on every node's
// InternalIP (a node that joins is added), and no ClusterIP is served.
func TestControllerForwardsToNodePorts(t *testing.T) {
	backend := tcpEcho(t, "node")
	node := func(name, ip string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "e2e"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "127.0.78.10", Ports: []corev1.ServicePort{
			{Name: "grpc", Protocol: corev1.ProtocolTCP, Port: 50071, NodePort: int32(backend.Port())},
		}},
	}
	client := fake.NewClientset(svc, node("n1", "127.0.0.1"))
	var mu sync.Mutex
	onLo := map[netip.Addr]bool{}
	track := func(on bool) func(context.Context, netip.Addr) error {
		return func(_ context.Context, a netip.Addr) error { mu.Lock(); onLo[a] = on; mu.Unlock(); return nil }
	}
	c := newController(Config{Pool: netip.MustParsePrefix("127.0.101.0/24"), NodePorts: true}.withLog(), client, track(true), track(false))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.run(ctx) }()

	waitFor(t, "TCP through the LB to the NodePort", func() bool { return tcpSays("127.0.101.1:50071") == "node:hi" })
	mu.Lock()
	require.False(t, onLo[netip.MustParseAddr("127.0.78.10")], "no ClusterIP on lo: the nodes' kube-proxy serves those")
	mu.Unlock()
	backends := func() []netip.AddrPort {
		be, err := c.nodePortBackends(svc.Spec.Ports[0]) // the node lister is safe to share
		require.NoError(t, err)
		return be
	}
	require.Equal(t, []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), backend.Port())}, backends())

	_, err := client.CoreV1().Nodes().Create(ctx, node("n2", "127.0.0.2"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, "the second node's NodePort", func() bool { return len(backends()) == 2 })
	require.Equal(t, "node:hi", tcpSays("127.0.101.1:50071"), "the first node still answers")

	cancel()
	require.NoError(t, <-done)
}
