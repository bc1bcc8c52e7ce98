package kubelet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestProbes(t *testing.T) {
	ready := make(chan bool, 1)
	ready <- false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := <-ready
		ready <- ok
		switch {
		case r.URL.Path == "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case r.Header.Get("X-Probe") != "yes":
			w.WriteHeader(http.StatusBadRequest)
		case !ok:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	port, _ := strconv.Atoi(srv.URL[len("http://127.0.0.1:"):])
	ip := netip.MustParseAddr("127.0.0.1")
	c := &corev1.Container{Name: "c", Ports: []corev1.ContainerPort{{Name: "status", ContainerPort: int32(port)}}}
	httpProbe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString("status"), HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "yes"}}}}}
	}
	ctx := context.Background()
	require.ErrorContains(t, runProbe(ctx, httpProbe("/readyz"), ip, c, nil), "status 503")
	<-ready
	ready <- true
	require.NoError(t, runProbe(ctx, httpProbe("/readyz"), ip, c, nil), "named port, headers")
	require.NoError(t, runProbe(ctx, httpProbe("/moved"), ip, c, nil), "a redirect counts as success")

	https := httpProbe("/readyz")
	https.HTTPGet.Scheme = corev1.URISchemeHTTPS
	require.ErrorContains(t, runProbe(ctx, https, ip, c, nil), "HTTPS probes are not supported")
	bad := httpProbe("/readyz")
	bad.HTTPGet.Port = intstr.FromString("nope")
	require.ErrorContains(t, runProbe(ctx, bad, ip, c, nil), `no port of that name`)

	tcp := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}}
	require.NoError(t, runProbe(ctx, tcp, ip, c, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	tcp.TCPSocket.Port = intstr.FromInt32(int32(closed))
	require.Error(t, runProbe(ctx, tcp, ip, c, nil), "nothing listens")

	// A probe that hangs is cut at timeoutSeconds.
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer slow.Close()
	defer close(hang)
	sp, _ := strconv.Atoi(slow.URL[len("http://127.0.0.1:"):])
	p := &corev1.Probe{TimeoutSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(sp))}}}
	start := time.Now()
	require.Error(t, runProbe(ctx, p, ip, c, nil))
	require.Less(t, time.Since(start), 3*time.Second)
}

func TestProbeThresholds(t *testing.T) {
	s := newProbeState(&corev1.Probe{SuccessThreshold: 2, FailureThreshold: 3}, false)
	require.False(t, s.observe(true), "one success of two")
	require.True(t, s.observe(true))
	require.True(t, s.observe(false))
	require.True(t, s.observe(false))
	require.False(t, s.observe(false), "third failure in a row")
	require.False(t, s.observe(true))
	d := newProbeState(&corev1.Probe{}, true)
	require.Equal(t, int32(1), d.success)
	require.Equal(t, int32(3), d.failure)
}

func TestReadinessIsPolledFastUntilFirstReady(t *testing.T) {
	period := 2 * time.Second
	r := newProbeState(&corev1.Probe{}, false)
	r.observe(false)
	require.Equal(t, startPoll, r.next(period), "never ready yet: poll")
	r.observe(true)
	require.Equal(t, period, r.next(period), "ready once: the probe's period")
	for range 3 {
		r.observe(false)
	}
	require.Equal(t, period, r.next(period), "not ready again: still the period, as a kubelet's")
	l := newProbeState(&corev1.Probe{}, true)
	for range 3 {
		l.observe(false)
	}
	require.Equal(t, period, l.next(period), "liveness keeps its period even when failing")
}

func TestBackoff(t *testing.T) {
	base, max := 10*time.Second, 5*time.Minute
	var got []time.Duration
	for n := 0; n < 8; n++ {
		got = append(got, backoff(n, base, max))
	}
	require.Equal(t, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second}, got)
	require.Equal(t, 300*time.Second, backoff(1000, base, max), "no overflow")
}
