package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/quicrelay"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

// TestTunnelThroughRelay dials the reference QUIC relay in front of a
// tunnel server, as the probe does in a cluster: a known SNI is relayed and
// accepted, an unknown one refused with unknown-sni, and the relay's
// mutual TLS refuses a missing or untrusted client certificate.
func TestTunnelThroughRelay(t *testing.T) {
	ca, other, clientCA := newTestCA(t, "root"), newTestCA(t, "other"), newTestCA(t, "client root")
	cert := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "*.sg.test")
	pod := serveTunnel(t, tunnel.ServerConfig{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}, Token: "secret"})
	relay, err := quicrelay.New(quicrelay.Config{
		TLS:                 &tls.Config{Certificates: []tls.Certificate{cert}},
		Endpoints:           quicrelay.Static{"sg-0.sg.test": pod},
		UpstreamRootCAs:     ca.pool(),
		ClientCAs:           clientCA.pool(),
		UpstreamCertificate: ptrTo(clientCA.leaf(t, x509.ExtKeyUsageClientAuth, time.Time{}, "relay")),
	})
	require.NoError(t, err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	up, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Serve(ctx, pc, up) }()
	t.Cleanup(func() { cancel(); <-done; pc.Close(); up.Close() })

	good := clientCA.leaf(t, x509.ExtKeyUsageClientAuth, time.Time{}, "pylon")
	rogue := other.leaf(t, x509.ExtKeyUsageClientAuth, time.Time{}, "pylon")
	serverOnly := clientCA.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "pylon")
	// Each TLS alert of the relay's handshake is its own reason: unknown_ca
	// (48) and bad_certificate (42) are not one refusal.
	for _, tc := range []struct {
		name  string
		sni   string
		certs []tls.Certificate
		want  reason.Reason
	}{
		{"relayed and accepted", "sg-0.sg.test", []tls.Certificate{good}, reason.None},
		{"unknown SNI", "sg-9.sg.test", []tls.Certificate{good}, reason.UnknownSNI},
		{"missing client certificate", "sg-0.sg.test", nil, reason.ClientCertRequired},
		{"untrusted client certificate", "sg-0.sg.test", []tls.Certificate{rogue}, reason.UntrustedClientCert},
		{"client certificate without clientAuth", "sg-0.sg.test", []tls.Certificate{serverOnly}, reason.BadClientCert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := New(Options{Timeout: 5 * time.Second}).Tunnel(context.Background(), QUICTarget{
				Addr: pc.LocalAddr().String(), TLS: TLS{Roots: ca.pool(), ServerName: tc.sni, Certificates: tc.certs},
				InferenceServerID: "rogue", Token: "secret",
			})
			r, o := Refusal(err)
			require.Equal(t, tc.want, r, "error: %v", err)
			if tc.want != reason.None {
				require.Equal(t, reason.OriginPeer, o, "a TLS alert names no role: %v", err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
