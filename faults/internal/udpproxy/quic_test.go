package udpproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/stretchr/testify/require"
)

// quicEcho is a real QUIC server on loopback that echoes every stream.
func quicEcho(t *testing.T) (netip.AddrPort, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quic.region-a.nvcf.test"}, DNSNames: []string{"quic.region-a.nvcf.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS13}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(context.Background())
					if err != nil {
						return
					}
					go func() { _, _ = io.Copy(s, s); _ = s.Close() }()
				}
			}()
		}
	}()
	return l.Addr().(*net.UDPAddr).AddrPort(), pool
}

func quicRoundTrip(ctx context.Context, c *quic.Conn, msg string) error {
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	if _, err := s.Write([]byte(msg)); err != nil {
		return err
	}
	_ = s.Close()
	got, err := io.ReadAll(s)
	if err != nil {
		return err
	}
	if string(got) != msg {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// TestQUICSurvivesLossDelayAndRebinding is the unit-level form of the
// resilience scenario "QUIC under 20 % loss and 100 ms ± 20 ms delay".
func TestQUICSurvivesLossDelayAndRebinding(t *testing.T) {
	srv, pool := quicEcho(t)
	imp := Impairment{Loss: 0.2, Delay: 100 * time.Millisecond, Jitter: 20 * time.Millisecond}
	p, cl := start(t, srv, Config{Up: imp, Down: imp, Seed: 42})
	_ = cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, p.Addr().String(), &tls.Config{ServerName: "quic.region-a.nvcf.test", RootCAs: pool, MinVersion: tls.VersionTLS13}, &quic.Config{MaxIdleTimeout: 60 * time.Second})
	require.NoError(t, err, "the handshake completes under 20 %% loss")
	defer conn.CloseWithError(0, "")
	for i := range 5 {
		require.NoError(t, quicRoundTrip(ctx, conn, "invocation"), "round trip %d", i)
	}
	st := p.Stats(Upstream)
	t.Logf("QUIC under 20%% loss, 100±20 ms: upstream %+v downstream %+v", st, p.Stats(Downstream))
	require.NotZero(t, st.Lost, "the impairment was applied")

	// The client's NAT mapping changes: the server sees a new address.
	p.Set(Upstream, Impairment{})
	p.Set(Downstream, Impairment{})
	_, err = p.Rebind()
	require.NoError(t, err)
	require.NoError(t, quicRoundTrip(ctx, conn, "after rebinding"), "the connection survives the rebinding")
}
