package pki_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
)

// defaultRequest is the request of the repository's default topology: two
// stargate clusters and one workers cluster.
func defaultRequest(t testing.TB) pki.Request {
	t.Helper()
	topo, err := topology.Load(filepath.Join("..", "topologies", "default.yaml"))
	require.NoError(t, err)
	return pkitopo.Request(topo, 0, false)
}

// mint mints req into a fresh folder.
func mint(t testing.TB, req pki.Request) *pki.Manifest {
	t.Helper()
	m, err := pki.Mint(context.Background(), req, filepath.Join(t.TempDir(), "pki"))
	require.NoError(t, err)
	require.False(t, m.Reused)
	return m
}

// certs reads every certificate of a PEM file.
func certs(t testing.TB, path string) []*x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		require.NoError(t, err)
		out = append(out, c)
	}
	require.NotEmpty(t, out, "no certificate in %s", path)
	return out
}

// pool makes a pool of the first certificate of each file.
func pool(t testing.TB, paths ...string) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	for _, path := range paths {
		p.AddCert(certs(t, path)[0])
	}
	return p
}

func find(t testing.TB, m *pki.Manifest, p pki.Purpose, cluster string) pki.Artifact {
	t.Helper()
	a, err := m.Find(p, cluster)
	require.NoError(t, err)
	return a
}
