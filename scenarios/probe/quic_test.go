package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

// serveTunnel starts the reference tunnel server on loopback UDP.
func serveTunnel(t *testing.T, cfg tunnel.ServerConfig) string {
	t.Helper()
	s, err := tunnel.NewServer(cfg)
	require.NoError(t, err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx, pc) }()
	t.Cleanup(func() { cancel(); <-done; pc.Close() })
	return pc.LocalAddr().String()
}

func TestTunnelClassification(t *testing.T) {
	ca, other := newTestCA(t, "root"), newTestCA(t, "other root")
	clientCA := newTestCA(t, "client root")
	server := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "sg-0.sg.test")
	tokenAddr := serveTunnel(t, tunnel.ServerConfig{TLS: &tls.Config{Certificates: []tls.Certificate{server}}, Token: "secret"})
	mtlsAddr := serveTunnel(t, tunnel.ServerConfig{TLS: &tls.Config{Certificates: []tls.Certificate{server}}, Token: "secret", ClientCAs: clientCA.pool()})
	goodClient := clientCA.leaf(t, x509.ExtKeyUsageClientAuth, time.Time{}, "pylon")
	rogueClient := other.leaf(t, x509.ExtKeyUsageClientAuth, time.Time{}, "pylon")
	// Trusted, but for servers only: Stargate's ack says bad-client-cert,
	// not untrusted-client-cert.
	serverOnlyClient := clientCA.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "pylon")

	for _, tc := range []struct {
		name   string
		addr   string
		tls    TLS
		token  string
		want   reason.Reason
		origin reason.Origin
	}{
		{"accepted", tokenAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test"}, "secret", reason.None, ""},
		{"bad token", tokenAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test"}, "guess", reason.BadToken, reason.OriginStargate},
		{"wrong server root", tokenAddr, TLS{Roots: other.pool(), ServerName: "sg-0.sg.test"}, "secret", reason.UnknownAuthority, reason.OriginProbe},
		{"unknown SNI name", tokenAddr, TLS{Roots: ca.pool(), ServerName: "sg-9.elsewhere.test"}, "secret", reason.HostnameMismatch, reason.OriginProbe},
		{"mutual TLS accepted", mtlsAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test", Certificates: []tls.Certificate{goodClient}}, "secret", reason.None, ""},
		{"missing client certificate", mtlsAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test"}, "secret", reason.ClientCertRequired, reason.OriginStargate},
		{"untrusted client certificate", mtlsAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test", Certificates: []tls.Certificate{rogueClient}}, "secret", reason.UntrustedClientCert, reason.OriginStargate},
		{"client certificate without clientAuth", mtlsAddr, TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test", Certificates: []tls.Certificate{serverOnlyClient}}, "secret", reason.BadClientCert, reason.OriginStargate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{Timeout: 5 * time.Second})
			err := p.Tunnel(context.Background(), QUICTarget{Addr: tc.addr, TLS: tc.tls, InferenceServerID: "rogue", Token: tc.token})
			r, o := Refusal(err)
			require.Equal(t, tc.want, r, "error: %v", err)
			require.Equal(t, tc.origin, o, "error: %v", err)
		})
	}
}

func TestTunnelNeedsRoots(t *testing.T) {
	err := New(Options{}).Tunnel(context.Background(), QUICTarget{Addr: "127.0.0.1:9", TLS: TLS{ServerName: "x"}})
	require.Equal(t, reason.NoTrust, Classify(err))
}

// A held tunnel stays open, answers the health checks a Stargate sends
// (with a real Stargate's headers, as the reference sends them), echoes
// invocations of its models and is gone once closed.
func TestHeldTunnelAnswersHealthChecks(t *testing.T) {
	ca := newTestCA(t, "root")
	server := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "sg-0.sg.test")
	s, err := tunnel.NewServer(tunnel.ServerConfig{TLS: &tls.Config{Certificates: []tls.Certificate{server}}, Token: "secret", HealthInterval: 20 * time.Millisecond})
	require.NoError(t, err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx, pc) }()
	t.Cleanup(func() { cancel(); <-done; pc.Close() })

	p := New(Options{Timeout: 5 * time.Second})
	held, err := p.OpenTunnel(context.Background(), QUICTarget{Addr: pc.LocalAddr().String(), TLS: TLS{Roots: ca.pool(), ServerName: "sg-0.sg.test"},
		InferenceServerID: "rogue", Token: "secret", Models: []string{"probe-rogue"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.Health()["rogue"].OK }, 10*time.Second, 10*time.Millisecond, "the held tunnel passes Stargate's health checks")
	all, real := held.HealthChecks()
	require.Positive(t, all)
	require.Equal(t, all, real, "every check carried a real Stargate's headers")

	sess, ok := s.Session("rogue")
	require.True(t, ok)
	req, err := http.NewRequest(http.MethodPost, "http://tunnel/v1/chat/completions", strings.NewReader(`{"model":"probe-rogue","stream":true,"messages":[{"role":"user","content":"via the probe"}]}`))
	require.NoError(t, err)
	tunnel.SetRequiredHeaders(req.Header, "r-1", "probe-rogue", 3)
	res, err := sess.RoundTrip(req)
	require.NoError(t, err)
	st, err := echo.ReadStream(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "via the probe", st.Text)
	require.Equal(t, int64(1), held.Requests())

	held.Close()
	require.NoError(t, held.Err(), "closed by the probe")
	require.Eventually(t, func() bool { _, ok := s.Session("rogue"); return !ok }, 10*time.Second, 10*time.Millisecond, "the closed tunnel is gone")
}
