package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// execProbe runs an exec probe's command in the container's namespaces and
// reports its error (nil = exit 0).
type execProbe func(ctx context.Context, command []string) error

// runProbe performs one probe of a container from the host against the pod
// IP, within the probe's timeout; nil means success.
func runProbe(ctx context.Context, p *corev1.Probe, podIP netip.Addr, c *corev1.Container, exec execProbe) error {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case p.HTTPGet != nil:
		return probeHTTP(ctx, p.HTTPGet, podIP, c)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return err
		}
		host := podIP.String()
		if p.TCPSocket.Host != "" {
			host = p.TCPSocket.Host
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case p.Exec != nil:
		if exec == nil {
			return errors.New("exec probes need a running container")
		}
		return exec(ctx, p.Exec.Command)
	case p.GRPC != nil:
		return errors.New("gRPC probes are not supported by the process kubelet; use httpGet or tcpSocket")
	}
	return errors.New("probe has no handler (httpGet, tcpSocket or exec)")
}

// probeHTTP does an HTTP GET; a status in [200, 400) succeeds. Redirects
// are not followed (a 3xx is a success, as for the kubelet).
func probeHTTP(ctx context.Context, g *corev1.HTTPGetAction, podIP netip.Addr, c *corev1.Container) error {
	if g.Scheme == corev1.URISchemeHTTPS {
		return errors.New("HTTPS probes are not supported by the process kubelet (the kubelet skips certificate checks, which this project never does); use httpGet over HTTP or tcpSocket")
	}
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return err
	}
	host := podIP.String()
	if g.Host != "" {
		host = g.Host
	}
	p := g.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, strconv.Itoa(port))+p, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/nvcf")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "host") {
			req.Host = h.Value
		} else {
			req.Header.Add(h.Name, h.Value)
		}
	}
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe %s: status %d", p, resp.StatusCode)
	}
	return nil
}

// resolvePort turns a numeric or named port into a number using the
// container's ports.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("probe port %d out of range", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("probe port %q: container %q has no port of that name", p.StrVal, c.Name)
}

// probeState counts consecutive results against a probe's thresholds.
type probeState struct {
	success, failure int32 // thresholds
	okRun, failRun   int32
	result           bool // current verdict
	everTrue         bool // the verdict has been true at least once
}

func newProbeState(p *corev1.Probe, initial bool) *probeState {
	s := &probeState{success: p.SuccessThreshold, failure: p.FailureThreshold, result: initial, everTrue: initial}
	if s.success <= 0 {
		s.success = 1
	}
	if s.failure <= 0 {
		s.failure = 3
	}
	return s
}

// startPoll is how often a readiness probe runs until its first success.
const startPoll = 100 * time.Millisecond

// next is the wait before the next probe. A readiness probe whose verdict
// has never been true runs every startPoll rather than every period, so a
// container is ready as soon as it answers, not up to a period later: every
// rollout, cell switch and pod replacement waits on this. After that, and
// for liveness (whose verdict starts true), it is the probe's period.
func (s *probeState) next(period time.Duration) time.Duration {
	if !s.everTrue {
		return min(period, startPoll)
	}
	return period
}

// observe records one probe outcome and returns the verdict: true after
// SuccessThreshold successes in a row, false after FailureThreshold failures
// in a row, unchanged in between.
func (s *probeState) observe(ok bool) bool {
	if ok {
		s.okRun++
		s.failRun = 0
		if s.okRun >= s.success {
			s.result, s.everTrue = true, true
		}
	} else {
		s.failRun++
		s.okRun = 0
		if s.failRun >= s.failure {
			s.result = false
		}
	}
	return s.result
}

// period and initialDelay of a probe, with the API defaults.
func probeTiming(p *corev1.Probe) (period, initial time.Duration) {
	period = time.Duration(p.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	return period, time.Duration(p.InitialDelaySeconds) * time.Second
}

// backoff is the wait before restart number n+1 of a container that has
// restarted n times: base·2ⁿ, at most max (10s, 20s, 40s … 5m by default).
func backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < n; i++ {
		d *= 2
		if d >= max {
			return max
		}
	}
	return min(d, max)
}
