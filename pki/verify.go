package pki

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nvcf/conformance/wire/reason"
)

// Verify checks a certificate or bundle artifact at time at, the way a
// peer of the harness would, and returns reason.None when it verifies or
// the reason it fails for, with the error:
//   - a certificate is verified with crypto/x509 against the trusted
//     roots, Root and QUICRoot (the chain in its file as intermediates),
//     for its Usage and its VerifyName;
//   - a bundle is read strictly (see the package docs) and must contain
//     a trusted root: one that does not parse fails with no-trust, one
//     that parses but holds neither root with unknown-authority (a client
//     trusting only it knows no server of the run).
//
// Keys, Secrets and ConfigMaps are not verifiable: an error, reason.Unknown.
func (m *Manifest) Verify(a Artifact, at time.Time) (reason.Reason, error) {
	trusted, err := m.trustedRoots()
	if err != nil {
		return reason.Unknown, err
	}
	roots := x509.NewCertPool()
	for _, c := range trusted {
		roots.AddCert(c)
	}
	switch a.Kind {
	case KindCert:
		err := verifyCertFile(m.Path(a), roots, a.Usage, a.VerifyName, at)
		return classifyVerifyError(err), err
	case KindBundle:
		data, err := os.ReadFile(m.Path(a))
		if err != nil {
			return reason.NoTrust, reason.Wrap(reason.NoTrust, err)
		}
		certs, err := parseBundle(data)
		if err != nil {
			return reason.NoTrust, fmt.Errorf("bundle %s: %w", a.File, err)
		}
		for _, c := range certs {
			for _, t := range trusted {
				if c.Equal(t) {
					return reason.None, nil
				}
			}
		}
		return reason.UnknownAuthority, reason.Wrap(reason.UnknownAuthority, fmt.Errorf("bundle %s holds no trusted root", a.File))
	}
	return reason.Unknown, fmt.Errorf("%s %s: a %s is not verifiable", a.Kind, a.File, a.Kind)
}

// trustedRoots are the certificates of Root and QUICRoot.
func (m *Manifest) trustedRoots() ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for _, p := range []Purpose{Root, QUICRoot} {
		root, err := m.Find(p, "")
		if err != nil {
			return nil, err
		}
		certs, err := readCerts(m.Path(root))
		if err != nil {
			return nil, err
		}
		out = append(out, certs[0])
	}
	return out, nil
}

// verifyCertFile verifies the first certificate of path, with the others as
// intermediates, against roots.
func verifyCertFile(path string, roots *x509.CertPool, u Usage, name string, at time.Time) error {
	certs, err := readCerts(path)
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: name, CurrentTime: at}
	switch u {
	case usageServer:
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	case usageClient:
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageAny}
	}
	_, err = certs[0].Verify(opts)
	return err
}

func readCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	certs, err := parseBundle(bytes.TrimSpace(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return certs, nil
}

// classifyVerifyError maps a crypto/x509 verification error (also when
// wrapped, e.g. in tls.CertificateVerificationError) to a typed reason:
// unknown authority → unknown-authority; a hostname error → hostname-mismatch,
// except for a certificate without any SAN (a CN-only certificate, which Go
// refuses for every name) → bad-certificate; outside the validity window →
// expired; an incompatible usage or any other invalid certificate →
// bad-certificate. nil is reason.None; anything else reason.Unknown.
func classifyVerifyError(err error) reason.Reason {
	if err == nil {
		return reason.None
	}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return reason.UnknownAuthority
	case errors.As(err, &he):
		if he.Certificate != nil && len(he.Certificate.DNSNames) == 0 && len(he.Certificate.IPAddresses) == 0 {
			return reason.BadCertificate
		}
		return reason.HostnameMismatch
	case errors.As(err, &ci):
		if ci.Reason == x509.Expired {
			return reason.Expired
		}
		return reason.BadCertificate
	}
	return reason.Of(err)
}
