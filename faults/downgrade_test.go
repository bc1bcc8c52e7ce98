package faults

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/nvcf/conformance/faults/internal/netnsx"
	"github.com/nvcf/conformance/faults/internal/nstest"
	"github.com/nvcf/conformance/wire/reason"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

// selfSigned returns a certificate for host and a pool that trusts it.
func selfSigned(t *testing.T, host string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestDowngradeMITMIsRefusedAndUndone(t *testing.T) {
	lab := nstest.New(t, 1)
	c := lab.Clusters[0]
	const host = "stargate.region-a.nvcf.test"
	cert, pool := selfSigned(t, host)
	lb := netip.AddrPortFrom(c.LB, 50071)
	l, err := netnsx.Listen(lab.Host, "tcp", lb.String())
	require.NoError(t, err)
	tl := tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	t.Cleanup(func() { _ = tl.Close() })
	go func() {
		for {
			conn, err := tl.Accept()
			if err != nil {
				return
			}
			go func() { _ = conn.(*tls.Conn).Handshake(); _ = conn.Close() }()
		}
	}()
	handshake := func() error {
		raw, err := dialFrom(c.PodNetns, lb, 10*time.Second)
		if err != nil {
			return err
		}
		defer raw.Close()
		_ = raw.SetDeadline(time.Now().Add(20 * time.Second))
		return tls.Client(raw, &tls.Config{ServerName: host, RootCAs: pool, MinVersion: tls.VersionTLS12}).Handshake()
	}
	require.NoError(t, handshake(), "positive control: TLS works before the fault")

	for _, mode := range []DowngradeMode{DowngradeH2C, downgradeStrip} {
		t.Run(string(mode), func(t *testing.T) {
			d := Downgrade{Path: Path{From: c.Pods, Gateway: c.Gateway, To: lb, Netns: lab.Host}, Mode: mode}
			if mode == downgradeStrip {
				// Relay to a plaintext HTTP server, as the router's h2c port.
				plain := netip.AddrPortFrom(c.LB, 50080)
				plainHTTP(t, lab.Host, plain)
				d.plainUpstream = plain
			}
			h := startT(context.Background(), t, Fault{Action: d}, nil)
			err := handshake()
			require.Error(t, err)
			// The harness's own classification (wire/reason) of the refusal.
			require.Equal(t, reason.PlaintextToTLS, reason.Classify(err), "refused for the right reason, got %v", err)
			require.NoError(t, h.Stop(context.Background()))
			require.NoError(t, handshake(), "undo restores TLS")
		})
	}
}

// plainHTTP serves cleartext HTTP/1.1 and h2c on addr inside ns.
func plainHTTP(t *testing.T, ns string, addr netip.AddrPort) {
	t.Helper()
	l, err := netnsx.Listen(ns, "tcp", addr.String())
	require.NoError(t, err)
	srv := &http.Server{Handler: h2c.NewHandler(http.NotFoundHandler(), &http2.Server{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}
