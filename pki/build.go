package pki

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nvcf/conformance/pki/internal/cfca"
	"github.com/nvcf/conformance/wire/reason"
)

// Time offsets of the minted windows, relative to the mint time.
const (
	caBackdate   = 7 * 24 * time.Hour
	goodBackdate = time.Hour
	expiredFrom  = 3 * 24 * time.Hour // expired certificates: [now-3d, now-1d]
	expiredUntil = 24 * time.Hour
)

// builder mints one PKI folder into dir (a fresh temporary folder).
type builder struct {
	ctx  context.Context
	dir  string
	now  time.Time
	req  Request
	sys  []byte
	m    *Manifest
	id   string
	root *cfca.CA
	// issuer signs the good ingress and client leaves: the intermediate,
	// or the root.
	issuer *cfca.CA
	// quicRoot is the root of the QUIC relay's certificates, apart from
	// root so that the trust of one TLS plane never verifies the other;
	// quicIssuer signs the good QUIC leaves (its intermediate, or it).
	quicRoot, quicIssuer *cfca.CA
	wrong                *cfca.CA
	// unrelated signs nothing; only its certificate is written.
	unrelated *cfca.CA
}

func (b *builder) build() error {
	var idb [4]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return err
	}
	b.id = hex.EncodeToString(idb[:])
	if err := b.cas(); err != nil {
		return err
	}
	for _, c := range b.req.Clusters {
		// The ingress certificate covers the dial hosts alone: TLS
		// verifies the dial host, never the :authority (the Stargate
		// identity), so a client that verified the authority must fail.
		if err := b.serverFamily(c.Name, RoleGRPC, b.issuer, c.DialHosts, c.DialHosts[0], c.Authorities); err != nil {
			return err
		}
		if err := b.serverFamily(c.Name, RoleQUIC, b.quicIssuer, c.QUICNames, concrete(c.QUICNames[0]), nil); err != nil {
			return err
		}
	}
	for _, c := range b.req.Clients {
		if err := b.clientFamily(c); err != nil {
			return err
		}
	}
	if err := b.bundles(); err != nil {
		return err
	}
	return b.kube()
}

func (b *builder) cas() error {
	life := 2*b.req.Validity + 2*caBackdate
	var err error
	if b.root, err = cfca.NewRoot("NVCF conformance root "+b.id, caBackdate, life); err != nil {
		return err
	}
	if b.quicRoot, err = cfca.NewRoot("NVCF conformance QUIC root "+b.id, caBackdate, life); err != nil {
		return err
	}
	if b.wrong, err = cfca.NewRoot("NVCF conformance wrong root (untrusted) "+b.id, caBackdate, life); err != nil {
		return err
	}
	if b.unrelated, err = cfca.NewRoot("NVCF conformance unrelated root (signs nothing) "+b.id, caBackdate, life); err != nil {
		return err
	}
	u := certArtifact("ca/unrelated-root.pem", UnrelatedRoot, "", "", b.unrelated.Cert)
	u.Usage, u.ExpectedFailure = usageCA, reason.UnknownAuthority
	if err := b.write(&u, b.unrelated.CertPEM, 0o644); err != nil {
		return err
	}
	if err := b.writeCA(Root, "ca/root", b.root, ""); err != nil {
		return err
	}
	if err := b.writeCA(QUICRoot, "ca/quic-root", b.quicRoot, ""); err != nil {
		return err
	}
	if err := b.writeCA(WrongRoot, "ca/wrong-root", b.wrong, reason.UnknownAuthority); err != nil {
		return err
	}
	b.issuer, b.quicIssuer = b.root, b.quicRoot
	if b.req.Intermediate {
		if b.issuer, err = b.intermediate(b.root, intermediate, "ca/intermediate", "NVCF conformance intermediate "+b.id); err != nil {
			return err
		}
		if b.quicIssuer, err = b.intermediate(b.quicRoot, quicIntermediate, "ca/quic-intermediate", "NVCF conformance QUIC intermediate "+b.id); err != nil {
			return err
		}
	}
	return nil
}

// intermediate makes and writes an intermediate CA of root.
func (b *builder) intermediate(root *cfca.CA, p Purpose, base, cn string) (*cfca.CA, error) {
	inter, err := root.NewIntermediate(cn, root.Cert.NotBefore, root.Cert.NotAfter)
	if err != nil {
		return nil, err
	}
	return inter, b.writeCA(p, base, inter, "")
}

func (b *builder) writeCA(p Purpose, base string, ca *cfca.CA, expect reason.Reason) error {
	a := certArtifact(base+".pem", p, "", "", ca.Cert)
	a.Usage, a.ExpectedFailure = usageCA, expect
	if err := b.write(&a, ca.CertPEM, 0o644); err != nil {
		return err
	}
	k := Artifact{File: base + "-key.pem", Kind: KindKey, Purpose: p}
	return b.write(&k, ca.KeyPEM, 0o600)
}

// leafSpec is one leaf certificate to mint.
type leafSpec struct {
	purpose  Purpose
	cluster  string
	role     Role
	leaf     cfca.Leaf
	ca       *cfca.CA
	usage    Usage
	verify   string
	expected reason.Reason
}

func (b *builder) windows() (good, expired, notYet [2]time.Time) {
	v := b.req.Validity
	good = [2]time.Time{b.now.Add(-goodBackdate), b.now.Add(v)}
	expired = [2]time.Time{b.now.Add(-expiredFrom), b.now.Add(-expiredUntil)}
	notYet = [2]time.Time{b.now.Add(v / 2), b.now.Add(v/2 + v)}
	return
}

// serverFamily mints the server certificates of role in cluster: issuer
// signs all but the wrong-root one, names are the good certificate's SANs,
// verify the name every one is verified for. authorities, when given, are
// names the role's clients carry beside verify but must not verify:
// ServerIdentityOnly covers them alone.
func (b *builder) serverFamily(cluster string, role Role, issuer *cfca.CA, names []string, verify string, authorities []string) error {
	good, expired, notYet := b.windows()
	wrongName := wrongHost(verify, names)
	leaf := func(cn string, hosts []string, profile string, w [2]time.Time) cfca.Leaf {
		return cfca.Leaf{CN: cn, Hosts: hosts, Profile: profile, NotBefore: w[0], NotAfter: w[1]}
	}
	specs := []leafSpec{
		{ServerGood, cluster, role, leaf(names[0], names, cfca.ProfileServer, good), issuer, usageServer, verify, reason.None},
		{ServerWrongHost, cluster, role, leaf(wrongName, []string{wrongName}, cfca.ProfileServer, good), issuer, usageServer, verify, reason.HostnameMismatch},
		{ServerExpired, cluster, role, leaf(names[0], names, cfca.ProfileServer, expired), issuer, usageServer, verify, reason.Expired},
		{serverNotYetValid, cluster, role, leaf(names[0], names, cfca.ProfileServer, notYet), issuer, usageServer, verify, reason.Expired},
		{ServerWrongRoot, cluster, role, leaf(names[0], names, cfca.ProfileServer, good), b.wrong, usageServer, verify, reason.UnknownAuthority},
		{serverNoServerAuth, cluster, role, leaf(names[0], names, cfca.ProfileClient, good), issuer, usageServer, verify, reason.BadCertificate},
		{serverCNOnly, cluster, role, leaf(verify, nil, cfca.ProfileServer, good), issuer, usageServer, verify, reason.BadCertificate},
	}
	if len(authorities) > 0 {
		specs = append(specs, leafSpec{ServerIdentityOnly, cluster, role, leaf(authorities[0], authorities, cfca.ProfileServer, good), issuer, usageServer, verify, reason.HostnameMismatch})
	}
	return b.leaves(specs)
}

func (b *builder) clientFamily(c ClientIdentity) error {
	good, expired, _ := b.windows()
	leaf := func(w [2]time.Time) cfca.Leaf {
		return cfca.Leaf{CN: c.Name, Hosts: []string{c.Name}, Profile: cfca.ProfileClient, NotBefore: w[0], NotAfter: w[1]}
	}
	return b.leaves([]leafSpec{
		{ClientGood, c.Cluster, RoleClient, leaf(good), b.issuer, usageClient, "", reason.None},
		{ClientWrongRoot, c.Cluster, RoleClient, leaf(good), b.wrong, usageClient, "", reason.UnknownAuthority},
		{clientExpired, c.Cluster, RoleClient, leaf(expired), b.issuer, usageClient, "", reason.Expired},
	})
}

func (b *builder) leaves(specs []leafSpec) error {
	for _, s := range specs {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		iss, err := s.ca.Issue(s.leaf)
		if err != nil {
			return fmt.Errorf("%s %s of cluster %q: %w", s.role, s.purpose, s.cluster, err)
		}
		base := filepath.Join(s.cluster, string(s.role), string(s.purpose))
		a := certArtifact(base+".pem", s.purpose, s.cluster, s.role, iss.Cert)
		a.Usage, a.VerifyName, a.ExpectedFailure = s.usage, s.verify, s.expected
		chain := append(append([]byte{}, iss.CertPEM...), s.ca.Chain...)
		if s.role == RoleQUIC && len(s.ca.Chain) == 0 {
			// A QUIC server's file holds its issuer, the root too: NVCF's
			// router relay trusts the Stargate pods through the
			// certificates of its own --tls-cert-path file and nothing
			// else, so the file it shares with the pods must hold their
			// issuer. Clients ignore a root a server sends, so
			// verification elsewhere is unchanged.
			chain = append(chain, s.ca.CertPEM...)
		}
		if err := b.write(&a, chain, 0o644); err != nil {
			return err
		}
		k := Artifact{File: base + "-key.pem", Kind: KindKey, Purpose: s.purpose, Cluster: s.cluster, Role: s.role}
		if err := b.write(&k, iss.KeyPEM, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func certArtifact(file string, p Purpose, cluster string, role Role, c *x509.Certificate) Artifact {
	return Artifact{
		File: file, Kind: KindCert, Purpose: p, Cluster: cluster, Role: role,
		Subject: c.Subject.String(), SANs: c.DNSNames, NotBefore: c.NotBefore.UTC(), NotAfter: c.NotAfter.UTC(),
		Issuer: c.Issuer.String(),
	}
}

// write stores data at a.File (mode perm, parents 0700), records its hash
// and appends a to the manifest.
func (b *builder) write(a *Artifact, data []byte, perm os.FileMode) error {
	path := filepath.Join(b.dir, a.File)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if err := os.Chmod(path, perm); err != nil { // WriteFile's mode is masked by umask
		return fmt.Errorf("output folder: %w", err)
	}
	sum := sha256.Sum256(data)
	a.SHA256 = hex.EncodeToString(sum[:])
	b.m.Artifacts = append(b.m.Artifacts, *a)
	return nil
}
