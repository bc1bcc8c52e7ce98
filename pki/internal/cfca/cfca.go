// Package cfca wraps cfssl's initca, csr and signer/local packages: it makes
// ECDSA P-256 certificate authorities and issues leaf certificates from them
// with explicit validity windows and signing profiles.
package cfca

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/cloudflare/cfssl/config"
	"github.com/cloudflare/cfssl/csr"
	"github.com/cloudflare/cfssl/helpers"
	"github.com/cloudflare/cfssl/initca"
	cflog "github.com/cloudflare/cfssl/log"
	"github.com/cloudflare/cfssl/signer"
	"github.com/cloudflare/cfssl/signer/local"
)

// Signing profiles understood by Issue.
const (
	// ProfileServer: digital signature + TLS server authentication.
	ProfileServer = "server"
	// ProfileClient: digital signature + TLS client authentication.
	ProfileClient = "client"
	// ProfileIntermediate: a CA that may sign leaves only (path length 0).
	ProfileIntermediate = "intermediate"
)

// Organization is the subject organisation of every certificate minted here.
const Organization = "NVCF conformance harness"

var quiet sync.Once

// silence lowers cfssl's global logger to errors: at its default (info) it
// writes a line per key and signature to stderr. Errors still come back as
// returned values.
func silence() { quiet.Do(func() { cflog.Level = cflog.LevelError }) }

// CA is a certificate authority that can issue certificates.
type CA struct {
	// Cert is the CA certificate; CertPEM and KeyPEM its PEM encodings.
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	// Chain is the PEM of the CA certificates between a leaf of this CA and
	// the root, excluding the root (empty for a root).
	Chain []byte

	signer *local.Signer
}

func policy() *config.Signing {
	// Expiry is required by cfssl's validation of the default profile;
	// every Issue call passes its own NotBefore/NotAfter.
	const expiry = 24 * time.Hour
	return &config.Signing{
		Default: &config.SigningProfile{Usage: []string{"digital signature", "server auth"}, Expiry: expiry, ExpiryString: expiry.String()},
		Profiles: map[string]*config.SigningProfile{
			ProfileServer: {Usage: []string{"digital signature", "server auth"}, Expiry: expiry, ExpiryString: expiry.String()},
			ProfileClient: {Usage: []string{"digital signature", "client auth"}, Expiry: expiry, ExpiryString: expiry.String()},
			ProfileIntermediate: {
				Usage: []string{"cert sign", "crl sign"}, Expiry: expiry, ExpiryString: expiry.String(),
				CAConstraint: config.CAConstraint{IsCA: true, MaxPathLen: 0, MaxPathLenZero: true},
			},
		},
	}
}

func keyRequest() *csr.KeyRequest { return &csr.KeyRequest{A: "ecdsa", S: 256} }

// NewRoot makes a self-signed root with cfssl's initca. Its window starts
// backdate before now and lasts lifetime (cfssl rounds now to the minute).
func NewRoot(cn string, backdate, lifetime time.Duration) (*CA, error) {
	silence()
	req := &csr.CertificateRequest{
		CN:         cn,
		Names:      []csr.Name{{O: Organization}},
		KeyRequest: keyRequest(),
		CA:         &csr.CAConfig{Expiry: lifetime.String(), Backdate: backdate.String()},
	}
	certPEM, _, keyPEM, err := initca.New(req)
	if err != nil {
		return nil, fmt.Errorf("initca %q: %w", cn, err)
	}
	return load(certPEM, keyPEM, nil)
}

func load(certPEM, keyPEM, chain []byte) (*CA, error) {
	cert, err := helpers.ParseCertificatePEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	key, err := helpers.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse CA key: %w", err)
	}
	s, err := local.NewSigner(key, cert, signer.DefaultSigAlgo(key), policy())
	if err != nil {
		return nil, fmt.Errorf("cfssl signer for %q: %w", cert.Subject.CommonName, err)
	}
	return &CA{Cert: cert, CertPEM: certPEM, KeyPEM: keyPEM, Chain: chain, signer: s}, nil
}

// Leaf describes a certificate to issue.
type Leaf struct {
	// CN is the subject common name; Hosts the DNS SANs (none: no SAN).
	CN    string
	Hosts []string
	// Profile is one of the Profile constants.
	Profile string
	// NotBefore and NotAfter bound the validity window.
	NotBefore, NotAfter time.Time
}

// Issued is a freshly signed certificate and its private key.
type Issued struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	// Key is the parsed private key.
	Key crypto.Signer
}

// Issue makes a key and a CSR with cfssl's csr package and signs it with
// the CA's cfssl local signer under l.Profile.
func (ca *CA) Issue(l Leaf) (*Issued, error) {
	silence()
	req := &csr.CertificateRequest{CN: l.CN, Names: []csr.Name{{O: Organization}}, Hosts: l.Hosts, KeyRequest: keyRequest()}
	if l.Profile == ProfileIntermediate {
		req.CA = &csr.CAConfig{PathLength: 0, PathLenZero: true}
	}
	g := &csr.Generator{Validator: func(*csr.CertificateRequest) error { return nil }}
	csrPEM, keyPEM, err := g.ProcessRequest(req)
	if err != nil {
		return nil, fmt.Errorf("csr for %q: %w", l.CN, err)
	}
	var hosts []string
	if len(l.Hosts) > 0 {
		hosts = l.Hosts
	}
	certPEM, err := ca.signer.Sign(signer.SignRequest{
		Hosts:     hosts,
		Request:   string(csrPEM),
		Profile:   l.Profile,
		NotBefore: l.NotBefore,
		NotAfter:  l.NotAfter,
	})
	if err != nil {
		return nil, fmt.Errorf("sign %q with %q: %w", l.CN, ca.Cert.Subject.CommonName, err)
	}
	cert, err := helpers.ParseCertificatePEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parse issued %q: %w", l.CN, err)
	}
	key, err := helpers.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse key of %q: %w", l.CN, err)
	}
	return &Issued{Cert: cert, CertPEM: certPEM, KeyPEM: keyPEM, Key: key}, nil
}

// NewIntermediate issues an intermediate CA (path length 0) under ca.
func (ca *CA) NewIntermediate(cn string, notBefore, notAfter time.Time) (*CA, error) {
	iss, err := ca.Issue(Leaf{CN: cn, Profile: ProfileIntermediate, NotBefore: notBefore, NotAfter: notAfter})
	if err != nil {
		return nil, err
	}
	chain := append(append([]byte{}, iss.CertPEM...), ca.Chain...)
	return load(iss.CertPEM, iss.KeyPEM, chain)
}
