package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a certificate with its key.
type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// certRequest says what to mint.
type certRequest struct {
	cn     string
	org    []string
	dns    []string
	ips    []net.IP
	server bool
	client bool
}

// newCA mints a self-signed CA valid for a year.
func newCA(cn string) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("sign CA %q: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA %q: %w", cn, err)
	}
	return &keyPair{cert: cert, key: key}, nil
}

// issue mints a leaf certificate signed by ca.
func (ca *keyPair) issue(r certRequest) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %q: %w", r.cn, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: r.cn, Organization: r.org},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		DNSNames:     r.dns,
		IPAddresses:  r.ips,
	}
	if r.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if r.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign %q: %w", r.cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", r.cn, err)
	}
	return &keyPair{cert: cert, key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120)) // crypto/rand does not fail on Linux
	return n
}

// certPEM and keyPEM encode the pair.
func (p *keyPair) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.cert.Raw})
}

func (p *keyPair) keyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(p.key)
	if err != nil {
		return nil, fmt.Errorf("marshal key of %q: %w", p.cert.Subject.CommonName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// write stores <dir>/<name>.crt (0644) and <dir>/<name>.key (0600).
func (p *keyPair) write(dir, name string) (crt, key string, err error) {
	crt, key = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	k, err := p.keyPEM()
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(crt, p.certPEM(), 0o644); err != nil {
		return "", "", fmt.Errorf("write %s: %w", crt, err)
	}
	if err := os.WriteFile(key, k, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", key, err)
	}
	return crt, key, nil
}
