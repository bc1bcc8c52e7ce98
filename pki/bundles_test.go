package pki_test

import (
	"bytes"
	"crypto/x509"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/wire/reason"
)

func TestBundles(t *testing.T) {
	sysFile := filepath.Join(t.TempDir(), "system.pem")
	other := mint(t, defaultRequest(t)) // its root stands in for a system root
	sysData, err := os.ReadFile(other.Path(find(t, other, pki.Root, "")))
	require.NoError(t, err)
	sysData = append([]byte("# a comment line, as some distributions write\n"), sysData...)
	require.NoError(t, os.WriteFile(sysFile, sysData, 0o644))

	req := defaultRequest(t)
	req.SystemRoots = sysFile
	m := mint(t, req)
	require.True(t, m.System.Present)
	require.Equal(t, 1, m.System.Certificates)
	rootPEM, err := os.ReadFile(m.Path(find(t, m, pki.Root, "")))
	require.NoError(t, err)
	quicRootPEM, err := os.ReadFile(m.Path(find(t, m, pki.QUICRoot, "")))
	require.NoError(t, err)
	rootsPEM := append(append([]byte{}, rootPEM...), quicRootPEM...)
	root := certs(t, m.Path(find(t, m, pki.Root, "")))[0]
	quicRoot := certs(t, m.Path(find(t, m, pki.QUICRoot, "")))[0]
	good := find(t, m, pki.ServerGood, "region-a")
	leaf := certs(t, m.Path(good))[0]
	quicGood, err := m.FindRole(pki.RoleQUIC, pki.ServerGood, "region-a")
	require.NoError(t, err)
	quicLeaf := certs(t, m.Path(quicGood))[0]
	verifiesWith := func(p *x509.CertPool) error {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: p, DNSName: good.VerifyName})
		return err
	}
	verifiesQUICWith := func(p *x509.CertPool) error {
		_, err := quicLeaf.Verify(x509.VerifyOptions{Roots: p, DNSName: quicGood.VerifyName})
		return err
	}
	poolOf := func(t *testing.T, p pki.Purpose) *x509.CertPool {
		data, err := os.ReadFile(m.Path(find(t, m, p, "")))
		require.NoError(t, err)
		cs, err := pki.ParseBundle(data)
		require.NoError(t, err)
		pool := x509.NewCertPool()
		for _, c := range cs {
			pool.AddCert(c)
		}
		return pool
	}

	t.Run("custom holds the trusted roots alone", func(t *testing.T) {
		a := find(t, m, pki.BundleCustom, "")
		data, err := os.ReadFile(m.Path(a))
		require.NoError(t, err)
		require.Equal(t, rootsPEM, data)
		cs, err := pki.ParseBundle(data)
		require.NoError(t, err)
		require.Len(t, cs, 2)
		require.NoError(t, verifiesWith(poolOf(t, pki.BundleCustom)))
		require.NoError(t, verifiesQUICWith(poolOf(t, pki.BundleCustom)))
	})
	t.Run("grpc and quic each verify their own plane only", func(t *testing.T) {
		for p, want := range map[pki.Purpose]*x509.Certificate{pki.BundleGRPC: root, pki.BundleQUIC: quicRoot} {
			data, err := os.ReadFile(m.Path(find(t, m, p, "")))
			require.NoError(t, err)
			cs, err := pki.ParseBundle(data)
			require.NoError(t, err)
			require.Len(t, cs, 1, p)
			require.True(t, cs[0].Equal(want), p)
		}
		require.NoError(t, verifiesWith(poolOf(t, pki.BundleGRPC)))
		require.Equal(t, reason.UnknownAuthority, pki.ClassifyVerifyError(verifiesQUICWith(poolOf(t, pki.BundleGRPC))))
		require.NoError(t, verifiesQUICWith(poolOf(t, pki.BundleQUIC)))
		require.Equal(t, reason.UnknownAuthority, pki.ClassifyVerifyError(verifiesWith(poolOf(t, pki.BundleQUIC))))
	})
	t.Run("merged is system then custom", func(t *testing.T) {
		a := find(t, m, pki.BundleMerged, "")
		require.Equal(t, pki.TrustBundleKey, filepath.Base(a.File))
		data, err := os.ReadFile(m.Path(a))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, sysData))
		require.True(t, bytes.HasSuffix(data, rootsPEM))
		cs, err := pki.ParseBundle(data)
		require.NoError(t, err)
		require.Len(t, cs, 3)
		require.True(t, cs[1].Equal(root))
		require.True(t, cs[2].Equal(quicRoot))
		p := x509.NewCertPool()
		for _, c := range cs {
			p.AddCert(c)
		}
		require.NoError(t, verifiesWith(p))
		require.NoError(t, verifiesQUICWith(p))
	})
	t.Run("unrelated verifies nothing and signs nothing", func(t *testing.T) {
		data, err := os.ReadFile(m.Path(find(t, m, pki.BundleUnrelated, "")))
		require.NoError(t, err)
		cs, err := pki.ParseBundle(data)
		require.NoError(t, err)
		require.Len(t, cs, 1)
		require.False(t, cs[0].Equal(root))
		p := x509.NewCertPool()
		p.AddCert(cs[0])
		require.Error(t, verifiesWith(p))
		for _, a := range m.Artifacts {
			if a.Purpose != pki.UnrelatedRoot { // self-signed
				require.NotEqual(t, cs[0].Subject.String(), a.Issuer, "%s is issued by the unrelated root", a.File)
			}
		}
	})
	t.Run("missing does not exist", func(t *testing.T) {
		a := find(t, m, pki.BundleMissing, "")
		require.True(t, a.Absent)
		_, err := os.Stat(m.Path(a))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("empty is empty", func(t *testing.T) {
		data, err := os.ReadFile(m.Path(find(t, m, pki.BundleEmpty, "")))
		require.NoError(t, err)
		require.Empty(t, data)
		_, err = pki.ParseBundle(data)
		require.Equal(t, reason.NoTrust, reason.Of(err))
	})
	t.Run("malformed fools a lenient loader only", func(t *testing.T) {
		data, err := os.ReadFile(m.Path(find(t, m, pki.BundleMalformed, "")))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, rootsPEM), "good blocks first")
		lenient := x509.NewCertPool()
		require.True(t, lenient.AppendCertsFromPEM(data), "the lenient stdlib loader keeps the good blocks")
		require.NoError(t, verifiesWith(lenient))
		require.NoError(t, verifiesQUICWith(lenient))
		_, err = pki.ParseBundle(data)
		require.Equal(t, reason.NoTrust, reason.Of(err))
		require.ErrorContains(t, err, "malformed")
	})
	t.Run("manifest expectations", func(t *testing.T) {
		for _, p := range pki.BundlePurposes {
			a := find(t, m, p, "")
			got, err := m.Verify(a, time.Now())
			require.Equal(t, a.ExpectedFailure, got, "%s: %v", p, err)
		}
		require.Empty(t, find(t, m, pki.BundleMerged, "").ExpectedFailure)
		require.Equal(t, reason.NoTrust, find(t, m, pki.BundleMalformed, "").ExpectedFailure)
	})
}

// TestSystemRootsAbsent: without a system bundle the merged bundle holds
// the custom roots alone, and the manifest says so.
func TestSystemRootsAbsent(t *testing.T) {
	req := defaultRequest(t)
	req.SystemRoots = filepath.Join(t.TempDir(), "no-such-bundle.pem")
	m := mint(t, req)
	require.False(t, m.System.Present)
	merged, err := os.ReadFile(m.Path(find(t, m, pki.BundleMerged, "")))
	require.NoError(t, err)
	custom, err := os.ReadFile(m.Path(find(t, m, pki.BundleCustom, "")))
	require.NoError(t, err)
	require.Equal(t, custom, merged)
}

// TestDebianSystemRoots merges the machine's real bundle when it exists.
func TestDebianSystemRoots(t *testing.T) {
	if _, err := os.Stat(pki.DefaultSystemRoots); err != nil {
		t.Skipf("no system bundle at %s (install Debian's ca-certificates): %v", pki.DefaultSystemRoots, err)
	}
	m := mint(t, defaultRequest(t))
	require.True(t, m.System.Present)
	data, err := os.ReadFile(m.Path(find(t, m, pki.BundleMerged, "")))
	require.NoError(t, err)
	cs, err := pki.ParseBundle(data)
	require.NoError(t, err)
	require.Len(t, cs, m.System.Certificates+2)
}

func TestMalformedSystemRootsRefused(t *testing.T) {
	sys := filepath.Join(t.TempDir(), "bad.pem")
	require.NoError(t, os.WriteFile(sys, []byte("-----BEGIN CERTIFICATE-----\nnot base64\n"), 0o644))
	req := defaultRequest(t)
	req.SystemRoots = sys
	_, err := pki.Mint(t.Context(), req, filepath.Join(t.TempDir(), "pki"))
	require.ErrorContains(t, err, sys)
}

func TestParseBundleStrictness(t *testing.T) {
	m := mint(t, pki.Request{Clients: []pki.ClientIdentity{{Cluster: "w", Name: "pylon.w.test"}}})
	rootPEM, err := os.ReadFile(m.Path(find(t, m, pki.Root, "")))
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(m.Path(m.Select(func(a pki.Artifact) bool { return a.Kind == pki.KindKey })[0]))
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"garbage after":  append(append([]byte{}, rootPEM...), "trailing junk\n"...),
		"text before":    append([]byte("junk\n"), rootPEM...),
		"a private key":  append(append([]byte{}, rootPEM...), keyPEM...),
		"only a comment": []byte("# nothing here\n"),
	} {
		_, err := pki.ParseBundle(data)
		require.Equal(t, reason.NoTrust, reason.Of(err), name)
	}
	cs, err := pki.ParseBundle(append(append([]byte("# roots\n\n"), rootPEM...), rootPEM...))
	require.NoError(t, err)
	require.Len(t, cs, 2)
}
