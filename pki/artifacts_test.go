package pki_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/wire/reason"
)

// TestLeavesAreWhatTheyAreMeantToBe checks every leaf certificate with
// crypto/x509 directly: the good ones verify for every name they carry, and
// each bad one fails for its intended reason and verifies once that one
// thing is put right (so it fails for that reason only).
func TestLeavesAreWhatTheyAreMeantToBe(t *testing.T) {
	for _, inter := range []bool{false, true} {
		t.Run(fmt.Sprintf("intermediate=%v", inter), func(t *testing.T) {
			req := defaultRequest(t)
			req.Intermediate = inter
			m := mint(t, req)
			roots := pool(t, m.Path(find(t, m, pki.Root, "")))
			quicRoots := pool(t, m.Path(find(t, m, pki.QUICRoot, "")))
			wrongRoots := pool(t, m.Path(find(t, m, pki.WrongRoot, "")))
			now := time.Now()
			checked := map[string]bool{}
			for _, a := range m.Select(func(a pki.Artifact) bool { return a.Kind == pki.KindCert && a.Role != "" }) {
				t.Run(a.File, func(t *testing.T) {
					// Each plane chains to its own root only.
					own, other := roots, quicRoots
					if a.Role == pki.RoleQUIC {
						own, other = quicRoots, roots
					}
					checkLeaf(t, m, a, own, wrongRoots, inter, now)
					if a.Purpose == pki.ServerGood || a.Purpose == pki.ClientGood {
						_, err := certs(t, m.Path(a))[0].Verify(x509.VerifyOptions{Roots: other, Intermediates: chainPool(t, m, a), DNSName: a.VerifyName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
						require.Equal(t, reason.UnknownAuthority, pki.ClassifyVerifyError(err), "the other plane's root must not verify %s", a.File)
					}
				})
				checked[fmt.Sprintf("%s/%s/%s", a.Cluster, a.Role, a.Purpose)] = true
			}
			want := 0
			for _, c := range req.Clusters {
				for _, role := range []pki.Role{pki.RoleGRPC, pki.RoleQUIC} {
					purposes := pki.ServerPurposes
					if role == pki.RoleGRPC {
						purposes = append(append([]pki.Purpose{}, purposes...), pki.IngressPurposes...)
					}
					for _, p := range purposes {
						require.True(t, checked[fmt.Sprintf("%s/%s/%s", c.Name, role, p)], "%s %s %s not minted", c.Name, role, p)
						want++
					}
				}
			}
			for _, c := range req.Clients {
				for _, p := range pki.ClientPurposes {
					require.True(t, checked[fmt.Sprintf("%s/%s/%s", c.Cluster, pki.RoleClient, p)], "%s client %s not minted", c.Cluster, p)
					want++
				}
			}
			require.Len(t, checked, want, "unexpected extra leaves")
		})
	}
}

// chainPool holds the certificates after the leaf in a's file.
func chainPool(t *testing.T, m *pki.Manifest, a pki.Artifact) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs(t, m.Path(a))[1:] {
		p.AddCert(c)
	}
	return p
}

func checkLeaf(t *testing.T, m *pki.Manifest, a pki.Artifact, roots, wrongRoots *x509.CertPool, inter bool, now time.Time) {
	chain := certs(t, m.Path(a))
	leaf := chain[0]
	if a.Role == pki.RoleQUIC {
		// A QUIC server's file ends with its issuer (NVCF's router relay
		// trusts the pods through its own file): a root when no
		// intermediate is between, which the chain checks below leave out.
		issuer := chain[len(chain)-1]
		require.True(t, issuer.IsCA, "a QUIC server's file ends with its issuer")
		require.Equal(t, chain[len(chain)-2].Issuer.String(), issuer.Subject.String(), "the last certificate issued the one before it")
		if issuer.Subject.String() == issuer.Issuer.String() {
			chain = chain[:len(chain)-1]
		}
	}
	inters := x509.NewCertPool()
	for _, c := range chain[1:] {
		inters.AddCert(c)
	}
	usage := x509.ExtKeyUsageServerAuth
	if a.Role == pki.RoleClient {
		usage = x509.ExtKeyUsageClientAuth
	}
	verify := func(roots *x509.CertPool, name string, at time.Time, u x509.ExtKeyUsage) error {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, DNSName: name, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{u}})
		return err
	}

	// The manifest describes the certificate truthfully.
	require.Equal(t, leaf.Subject.String(), a.Subject)
	require.Equal(t, leaf.Issuer.String(), a.Issuer)
	require.ElementsMatch(t, leaf.DNSNames, a.SANs)
	require.True(t, leaf.NotBefore.Equal(a.NotBefore) && leaf.NotAfter.Equal(a.NotAfter), "window %v..%v vs manifest %v..%v", leaf.NotBefore, leaf.NotAfter, a.NotBefore, a.NotAfter)
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	require.True(t, ok, "want an ECDSA key")
	require.Equal(t, elliptic.P256(), pub.Curve)
	require.False(t, leaf.IsCA)

	err := verify(roots, a.VerifyName, now, usage)
	require.Equal(t, a.ExpectedFailure, pki.ClassifyVerifyError(err), "verify error: %v", err)
	got, _ := m.Verify(a, now)
	require.Equal(t, a.ExpectedFailure, got, "Manifest.Verify disagrees")

	switch a.Purpose {
	case pki.ServerGood, pki.ClientGood:
		require.NoError(t, err)
		require.NotEmpty(t, leaf.DNSNames)
		for _, san := range leaf.DNSNames {
			require.NoError(t, verify(roots, strings.Replace(san, "*", pki.SampleLabel, 1), now, usage), "SAN %s", san)
		}
		if inter {
			require.Len(t, chain, 2, "leaf followed by the intermediate")
			_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: a.VerifyName, KeyUsages: []x509.ExtKeyUsage{usage}})
			require.Equal(t, reason.UnknownAuthority, pki.ClassifyVerifyError(err), "without the intermediate the chain must break")
		} else {
			require.Len(t, chain, 1)
		}
	case pki.ServerWrongHost:
		var he x509.HostnameError
		require.ErrorAs(t, err, &he)
		require.Len(t, leaf.DNSNames, 1)
		require.NoError(t, verify(roots, leaf.DNSNames[0], now, usage), "only the name is wrong")
	case pki.ServerIdentityOnly:
		var he x509.HostnameError
		require.ErrorAs(t, err, &he)
		require.Equal(t, pki.RoleGRPC, a.Role)
		require.NotEmpty(t, leaf.DNSNames)
		for _, san := range leaf.DNSNames {
			require.True(t, strings.HasPrefix(san, "*."), "only identity wildcards, got %s", san)
			require.NoError(t, verify(roots, strings.Replace(san, "*", pki.SampleLabel, 1), now, usage), "only the name is wrong: SAN %s", san)
		}
	case pki.ServerExpired, pki.ClientExpired, pki.ServerNotYetValid:
		var ci x509.CertificateInvalidError
		require.ErrorAs(t, err, &ci)
		require.Equal(t, x509.Expired, ci.Reason)
		if a.Purpose == pki.ServerNotYetValid {
			require.True(t, now.Before(leaf.NotBefore))
		} else {
			require.True(t, now.After(leaf.NotAfter))
		}
		mid := leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)
		require.NoError(t, verify(roots, a.VerifyName, mid, usage), "only the time is wrong")
	case pki.ServerWrongRoot, pki.ClientWrongRoot:
		var ua x509.UnknownAuthorityError
		require.ErrorAs(t, err, &ua)
		require.Len(t, chain, 1)
		require.NoError(t, verify(wrongRoots, a.VerifyName, now, usage), "only the root is wrong")
	case pki.ServerNoServerAuth:
		var ci x509.CertificateInvalidError
		require.ErrorAs(t, err, &ci)
		require.Equal(t, x509.IncompatibleUsage, ci.Reason)
		require.NotContains(t, leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		require.NoError(t, verify(roots, a.VerifyName, now, x509.ExtKeyUsageClientAuth), "only the usage is wrong")
	case pki.ServerCNOnly:
		var he x509.HostnameError
		require.ErrorAs(t, err, &he)
		require.Empty(t, leaf.DNSNames)
		require.Empty(t, leaf.IPAddresses)
		require.Equal(t, a.VerifyName, leaf.Subject.CommonName)
		require.NoError(t, verify(roots, "", now, usage), "only the missing SAN is wrong")
	default:
		t.Fatalf("purpose %s has no check", a.Purpose)
	}
}

// TestCertificateAuthorities checks the root, the wrong root and the
// intermediate.
func TestCertificateAuthorities(t *testing.T) {
	req := defaultRequest(t)
	req.Intermediate = true
	m := mint(t, req)
	rootA, wrongA, interA := find(t, m, pki.Root, ""), find(t, m, pki.WrongRoot, ""), find(t, m, pki.Intermediate, "")
	root, wrong, inter := certs(t, m.Path(rootA))[0], certs(t, m.Path(wrongA))[0], certs(t, m.Path(interA))[0]
	roots, wrongRoots := pool(t, m.Path(rootA)), pool(t, m.Path(wrongA))
	anyUse := []x509.ExtKeyUsage{x509.ExtKeyUsageAny}

	for _, c := range []*x509.Certificate{root, wrong, inter} {
		require.True(t, c.IsCA && c.BasicConstraintsValid, c.Subject.CommonName)
		require.NotZero(t, c.KeyUsage&x509.KeyUsageCertSign, c.Subject.CommonName)
	}
	require.NoError(t, root.CheckSignatureFrom(root))
	require.NoError(t, wrong.CheckSignatureFrom(wrong))
	require.NotEqual(t, root.Subject.String(), wrong.Subject.String())

	_, err := wrong.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: anyUse})
	require.Equal(t, reason.UnknownAuthority, pki.ClassifyVerifyError(err))
	_, err = wrong.Verify(x509.VerifyOptions{Roots: wrongRoots, KeyUsages: anyUse})
	require.NoError(t, err)

	// The QUIC plane has a root (and intermediate) of its own.
	quicRoot := certs(t, m.Path(find(t, m, pki.QUICRoot, "")))[0]
	quicInter := certs(t, m.Path(find(t, m, pki.QUICIntermediate, "")))[0]
	require.True(t, quicRoot.IsCA && quicInter.IsCA)
	require.NoError(t, quicRoot.CheckSignatureFrom(quicRoot))
	require.NoError(t, quicInter.CheckSignatureFrom(quicRoot))
	require.Error(t, quicInter.CheckSignatureFrom(root))
	require.NotEqual(t, root.Subject.String(), quicRoot.Subject.String())

	require.NoError(t, inter.CheckSignatureFrom(root))
	require.Equal(t, 0, inter.MaxPathLen)
	require.True(t, inter.MaxPathLenZero, "the intermediate may sign leaves only")
	_, err = inter.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: anyUse})
	require.NoError(t, err)

	// Every time-shifted leaf lies inside the CAs' windows, so its window
	// is the only thing wrong with it.
	for _, a := range m.Select(func(a pki.Artifact) bool { return a.Kind == pki.KindCert }) {
		for _, ca := range []*x509.Certificate{root, wrong, inter} {
			require.False(t, a.NotBefore.Before(ca.NotBefore), "%s starts before %s", a.File, ca.Subject.CommonName)
			require.False(t, a.NotAfter.After(ca.NotAfter), "%s ends after %s", a.File, ca.Subject.CommonName)
		}
	}
	for _, a := range []pki.Artifact{rootA, wrongA, interA} {
		got, _ := m.Verify(a, time.Now())
		require.Equal(t, a.ExpectedFailure, got, a.File)
	}
}

// TestIngressCertificateCoversTheDialHostsOnly: the good ingress
// certificate verifies for every dial host and for no identity carried as
// :authority, so a client that verified the authority cannot pass.
func TestIngressCertificateCoversTheDialHostsOnly(t *testing.T) {
	req := defaultRequest(t)
	m := mint(t, req)
	roots := pool(t, m.Path(find(t, m, pki.Root, "")))
	for _, c := range req.Clusters {
		require.NotEmpty(t, c.Authorities, c.Name)
		leaf := certs(t, m.Path(find(t, m, pki.ServerGood, c.Name)))[0]
		require.ElementsMatch(t, c.DialHosts, leaf.DNSNames, c.Name)
		for _, host := range c.DialHosts {
			_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
			require.NoError(t, err, host)
		}
		for _, auth := range c.Authorities {
			_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: strings.Replace(auth, "*", pki.SampleLabel, 1)})
			require.Equal(t, reason.HostnameMismatch, pki.ClassifyVerifyError(err), auth)
		}
	}
}
