package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

// handshake runs a TLS handshake over an in-memory pipe and returns the
// client's and the server's errors.
func handshake(t *testing.T, server, client *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	a, b := net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	require.NoError(t, a.SetDeadline(deadline))
	require.NoError(t, b.SetDeadline(deadline))
	srv, cli := tls.Server(a, server), tls.Client(b, client)
	done := make(chan error, 1)
	go func() {
		err := srv.HandshakeContext(t.Context())
		_ = a.Close() // the raw end: net.Pipe writes block, so no close_notify
		done <- err
	}()
	clientErr = cli.HandshakeContext(t.Context())
	_ = b.Close()
	return clientErr, <-done
}

// TestHandshakes uses the credentials in real crypto/tls handshakes: a
// client trusting the merged bundle gets the intended failure reason from
// every server certificate, and a server requiring client certificates
// from the custom bundle gets it from every client certificate.
func TestHandshakes(t *testing.T) {
	m := mint(t, defaultRequest(t))
	trust := x509.NewCertPool()
	for _, c := range certs(t, m.Path(find(t, m, pki.BundleMerged, ""))) {
		trust.AddCert(c)
	}
	for _, role := range []pki.Role{pki.RoleGRPC, pki.RoleQUIC} {
		purposes := pki.ServerPurposes
		if role == pki.RoleGRPC {
			purposes = append(append([]pki.Purpose{}, purposes...), pki.IngressPurposes...)
		}
		for _, p := range purposes {
			cred, err := m.Credential(role, p, "region-a")
			require.NoError(t, err)
			pair, err := cred.TLSCertificate()
			require.NoError(t, err)
			clientErr, _ := handshake(t,
				&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13},
				&tls.Config{RootCAs: trust, ServerName: cred.Cert.VerifyName, MinVersion: tls.VersionTLS13})
			require.Equal(t, cred.Cert.ExpectedFailure, pki.ClassifyVerifyError(clientErr), "%s %s: %v", role, p, clientErr)
		}
	}

	good, err := m.Credential(pki.RoleGRPC, pki.ServerGood, "region-a")
	require.NoError(t, err)
	serverPair, err := good.TLSCertificate()
	require.NoError(t, err)
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(certs(t, m.Path(find(t, m, pki.BundleCustom, "")))[0])
	for _, p := range pki.ClientPurposes {
		cred, err := m.Credential(pki.RoleClient, p, "workers")
		require.NoError(t, err)
		pair, err := cred.TLSCertificate()
		require.NoError(t, err)
		_, serverErr := handshake(t,
			&tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs, MinVersion: tls.VersionTLS13},
			&tls.Config{
				// Send the certificate even when its issuer is not among
				// the server's acceptable CAs, as a misconfigured client would.
				GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil },
				RootCAs:              trust, ServerName: good.Cert.VerifyName, MinVersion: tls.VersionTLS13,
			})
		require.Equal(t, cred.Cert.ExpectedFailure, pki.ClassifyVerifyError(serverErr), "client %s: %v", p, serverErr)
	}
}
