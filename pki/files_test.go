package pki_test

import (
	"crypto"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

// TestFilesAndModes: the folder is 0700, keys and Secrets 0600, every key
// pairs with its certificate, and the manifest names every file there is.
func TestFilesAndModes(t *testing.T) {
	m := mint(t, defaultRequest(t))
	fi, err := os.Stat(m.Dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	named := map[string]bool{pki.ManifestFile: true}
	keys := 0
	for _, a := range m.Artifacts {
		named[a.File] = true
		if a.Absent {
			continue
		}
		fi, err := os.Stat(m.Path(a))
		require.NoError(t, err, a.File)
		switch a.Kind {
		case pki.KindKey, pki.KindSecret:
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), a.File)
		default:
			require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), a.File)
		}
		if a.Kind != pki.KindKey {
			continue
		}
		keys++
		cert, err := m.Companion(a, pki.KindCert)
		require.NoError(t, err)
		pair, err := tls.LoadX509KeyPair(m.Path(cert), m.Path(a))
		require.NoError(t, err, "%s does not pair with %s", a.File, cert.File)
		pub := pair.Leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
		require.True(t, pub.Equal(pair.PrivateKey.(crypto.Signer).Public()))
	}
	require.Equal(t, 3+2*(2*len(pki.ServerPurposes)+len(pki.IngressPurposes))+len(pki.ClientPurposes), keys, "a key per CA (root, QUIC root, wrong root) and per leaf")

	err = filepath.WalkDir(m.Dir, func(path string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			if path != m.Dir {
				fi, err := d.Info()
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), path)
			}
			return nil
		}
		rel, err := filepath.Rel(m.Dir, path)
		require.NoError(t, err)
		require.True(t, named[rel], "%s is not in the manifest", rel)
		return nil
	})
	require.NoError(t, err)

	loaded, err := pki.Load(m.Dir)
	require.NoError(t, err)
	require.Equal(t, m.Artifacts, loaded.Artifacts)
	require.Equal(t, m.InputHash, loaded.InputHash)
}

func TestFindHelpers(t *testing.T) {
	m := mint(t, defaultRequest(t))
	a, err := m.Find(pki.ServerGood, "region-a")
	require.NoError(t, err)
	require.Equal(t, pki.RoleGRPC, a.Role)
	require.Equal(t, "stargate.region-a.nvcf.test", a.VerifyName)
	q, err := m.FindRole(pki.RoleQUIC, pki.ServerGood, "region-a")
	require.NoError(t, err)
	require.Equal(t, "stargate-0.sg.region-a.nvcf.test", q.VerifyName)
	c, err := m.Find(pki.ClientGood, "workers")
	require.NoError(t, err)
	require.Equal(t, pki.RoleClient, c.Role)
	cred, err := m.Credential(pki.RoleQUIC, pki.ServerExpired, "region-b")
	require.NoError(t, err)
	require.Equal(t, "nvcf-quic-server-expired", cred.Secret)
	require.FileExists(t, cred.CertPath)
	require.FileExists(t, cred.KeyPath)
	pair, err := cred.TLSCertificate()
	require.NoError(t, err)
	require.Equal(t, cred.Cert.NotAfter, pair.Leaf.NotAfter.UTC())

	_, err = m.Find(pki.ServerGood, "region-z")
	require.ErrorContains(t, err, `"region-z"`)
	require.ErrorContains(t, err, "region-a")
	_, err = m.Find(pki.ServerGood, "workers")
	require.Error(t, err, "workers clusters get no server certificates")
}
