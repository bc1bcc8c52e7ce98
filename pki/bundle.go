package pki

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nvcf/conformance/wire/reason"
)

// parseBundle reads a PEM trust bundle strictly: every block must be a
// parseable CERTIFICATE, text before a block may only be blank or '#'
// comment lines, nothing may follow the last block, and there must be at
// least one certificate. Failures carry reason.NoTrust.
func parseBundle(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for n := 1; ; n++ {
		begin := bytes.Index(rest, []byte("-----BEGIN "))
		if begin < 0 {
			break
		}
		if !onlyComments(rest[:begin]) {
			return nil, reason.Wrap(reason.NoTrust, fmt.Errorf("text before PEM block %d is neither blank nor a '#' comment", n))
		}
		block, after := pem.Decode(rest[begin:])
		if block == nil {
			return nil, reason.Wrap(reason.NoTrust, fmt.Errorf("PEM block %d is malformed (truncated or bad base64)", n))
		}
		if block.Type != "CERTIFICATE" {
			return nil, reason.Wrap(reason.NoTrust, fmt.Errorf("PEM block %d is %q, want CERTIFICATE", n, block.Type))
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, reason.Wrap(reason.NoTrust, fmt.Errorf("certificate %d does not parse: %w", n, err))
		}
		certs = append(certs, c)
		rest = after
	}
	if !onlyComments(rest) {
		return nil, reason.Wrap(reason.NoTrust, fmt.Errorf("%d bytes after the last certificate are not PEM", len(bytes.TrimSpace(rest))))
	}
	if len(certs) == 0 {
		return nil, reason.Wrap(reason.NoTrust, errors.New("no certificate in the bundle"))
	}
	return certs, nil
}

func onlyComments(b []byte) bool {
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// readSystemRoots reads the system bundle at path. A missing file is not
// an error (the merged bundle then holds the custom root alone); an
// unreadable or malformed one is.
func readSystemRoots(path string) ([]byte, SystemRoots, error) {
	info := SystemRoots{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, info, nil
	}
	if err != nil {
		return nil, info, fmt.Errorf("system roots %q: %w", path, err)
	}
	certs, err := parseBundle(data)
	if err != nil {
		return nil, info, fmt.Errorf("system roots %q: %w; point Request.SystemRoots at a well-formed bundle", path, err)
	}
	sum := sha256.Sum256(data)
	info.Present, info.Certificates, info.SHA256 = true, len(certs), hex.EncodeToString(sum[:])
	return data, info, nil
}

// bundles writes the trust bundles.
func (b *builder) bundles() error {
	root := b.root.CertPEM
	roots := append(append([]byte{}, root...), b.quicRoot.CertPEM...)
	merged := append([]byte{}, b.sys...)
	if len(merged) > 0 && merged[len(merged)-1] != '\n' {
		merged = append(merged, '\n')
	}
	merged = append(merged, roots...)
	// Good blocks, then a block cut off in its base64 body: lenient
	// loaders (x509.CertPool.AppendCertsFromPEM) keep the first ones and
	// ignore the rest; a strict loader must reject the whole bundle.
	body := root[bytes.IndexByte(root, '\n')+1:]
	malformed := append(append([]byte{}, roots...), []byte("-----BEGIN CERTIFICATE-----\n")...)
	malformed = append(malformed, body[:64]...)
	malformed = append(malformed, '\n')
	files := []struct {
		p      Purpose
		file   string
		data   []byte
		expect bool
	}{
		{BundleCustom, "bundles/custom.pem", roots, false},
		{bundleMerged, "bundles/" + TrustBundleKey, merged, false},
		{bundleMissing, "bundles/missing.pem", nil, true},
		{bundleEmpty, "bundles/empty.pem", []byte{}, true},
		{BundleMalformed, "bundles/malformed.pem", malformed, true},
		{BundleUnrelated, "bundles/unrelated.pem", b.unrelated.CertPEM, false},
		{BundleGRPC, "bundles/grpc.pem", root, false},
		{BundleQUIC, "bundles/quic.pem", b.quicRoot.CertPEM, false},
	}
	for _, f := range files {
		a := Artifact{File: f.file, Kind: KindBundle, Purpose: f.p}
		if f.expect {
			a.ExpectedFailure = reason.NoTrust
		}
		if f.p == BundleUnrelated {
			a.ExpectedFailure = reason.UnknownAuthority
		}
		if f.p == bundleMissing {
			a.Absent = true
			b.m.Artifacts = append(b.m.Artifacts, a)
			continue
		}
		if err := b.write(&a, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
