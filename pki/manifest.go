package pki

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nvcf/conformance/wire/reason"
)

// manifestFile is the manifest's name inside a PKI folder.
const manifestFile = "manifest.json"

// Kind is what an artifact file holds.
type Kind string

// The artifact kinds.
const (
	KindCert      Kind = "cert"      // a PEM certificate (a leaf followed by its chain, or a CA)
	KindKey       Kind = "key"       // a PEM private key (0600)
	KindBundle    Kind = "bundle"    // a PEM trust bundle
	kindSecret    Kind = "secret"    // a Kubernetes Secret (type kubernetes.io/tls) as YAML (0600)
	kindConfigMap Kind = "configmap" // a Kubernetes ConfigMap as YAML
)

// Role says where a certificate is used.
type Role string

// The roles of leaf certificates; CAs and bundles have none.
const (
	// RoleGRPC is the TLS ingress: gRPC on 50071 and HTTP on 8000.
	RoleGRPC Role = "grpc"
	// RoleQUIC is the QUIC relay on UDP 50072 (SNI = Stargate identity).
	RoleQUIC Role = "quic"
	// RoleClient is a reverse-QUIC mutual-TLS client (Pylon).
	RoleClient Role = "client"
)

// Usage is the extended key usage an artifact is verified for.
type Usage string

// The usages.
const (
	usageServer Usage = "server"
	usageClient Usage = "client"
	usageCA     Usage = "ca"
)

// Artifact is one file of a PKI folder.
type Artifact struct {
	// File is the path relative to the folder (Manifest.Path makes it absolute).
	File    string  `json:"file"`
	Kind    Kind    `json:"kind"`
	Purpose Purpose `json:"purpose"`
	// Cluster is set for per-cluster artifacts.
	Cluster string `json:"cluster,omitempty"`
	Role    Role   `json:"role,omitempty"`
	// Name is the Kubernetes object name (secrets and configmaps).
	Name string `json:"name,omitempty"`
	// Subject, SANs, NotBefore, NotAfter and Issuer describe a certificate.
	Subject   string    `json:"subject,omitempty"`
	SANs      []string  `json:"sans,omitempty"`
	NotBefore time.Time `json:"notBefore,omitzero"`
	NotAfter  time.Time `json:"notAfter,omitzero"`
	Issuer    string    `json:"issuer,omitempty"`
	// Usage and VerifyName are what a peer verifies the certificate for.
	Usage      Usage  `json:"usage,omitempty"`
	VerifyName string `json:"verifyName,omitempty"`
	// ExpectedFailure is the reason verification against the trusted root
	// must fail with; empty means it must verify.
	ExpectedFailure reason.Reason `json:"expectedFailure,omitempty"`
	// Absent marks a file deliberately not written (bundle-missing).
	Absent bool `json:"absent,omitempty"`
	// SHA256 of the file's content, checked before a folder is reused.
	SHA256 string `json:"sha256,omitempty"`
}

// SystemRoots records the system trust bundle merged into nvcf-ca-bundle.pem.
type SystemRoots struct {
	Path         string `json:"path"`
	Present      bool   `json:"present"`
	Certificates int    `json:"certificates"`
	SHA256       string `json:"sha256,omitempty"`
}

// Manifest names every artifact of a PKI folder.
type Manifest struct {
	Format    string      `json:"format"`
	InputHash string      `json:"inputHash"`
	MintedAt  time.Time   `json:"mintedAt"`
	Validity  string      `json:"validity"`
	Request   Request     `json:"request"`
	System    SystemRoots `json:"systemRoots"`
	Artifacts []Artifact  `json:"artifacts"`

	// Dir is the folder the manifest was loaded from or minted into.
	Dir string `json:"-"`
	// Reused is true when Mint found the folder current and minted nothing.
	Reused bool `json:"-"`
}

// Load reads the manifest of a PKI folder.
func Load(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, fmt.Errorf("pki folder %q: %w (mint it with `harness pki mint`)", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("pki folder %q: manifest: %w", dir, err)
	}
	if m.Format != formatTag {
		return nil, fmt.Errorf("pki folder %q: manifest format %q, want %q (re-mint it)", dir, m.Format, formatTag)
	}
	m.Dir = dir
	return &m, nil
}

// Path returns the absolute path of an artifact's file.
func (m *Manifest) Path(a Artifact) string { return filepath.Join(m.Dir, a.File) }

// Select returns the artifacts for which keep is true, in manifest order.
func (m *Manifest) Select(keep func(Artifact) bool) []Artifact {
	var out []Artifact
	for _, a := range m.Artifacts {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// Find returns the certificate or bundle with purpose p for cluster ("" for
// CAs and bundles). For server purposes it is the gRPC ingress certificate;
// FindRole selects the QUIC relay's.
func (m *Manifest) Find(p Purpose, cluster string) (Artifact, error) {
	role := Role("")
	switch {
	case p.server():
		role = RoleGRPC
	case p.client():
		role = RoleClient
	}
	return m.FindRole(role, p, cluster)
}

// FindRole returns the certificate or bundle with role, purpose p and cluster.
func (m *Manifest) FindRole(role Role, p Purpose, cluster string) (Artifact, error) {
	for _, a := range m.Artifacts {
		if (a.Kind == KindCert || a.Kind == KindBundle) && a.Purpose == p && a.Cluster == cluster && a.Role == role {
			return a, nil
		}
	}
	return Artifact{}, fmt.Errorf("pki manifest %q: no %s %s artifact for cluster %q (clusters: %v)", m.Dir, role, p, cluster, m.clusters())
}

// Companion returns the artifact of kind k minted with a (its key, its
// Secret, or a bundle's ConfigMap).
func (m *Manifest) Companion(a Artifact, k Kind) (Artifact, error) {
	for _, b := range m.Artifacts {
		if b.Kind == k && b.Purpose == a.Purpose && b.Cluster == a.Cluster && b.Role == a.Role {
			return b, nil
		}
	}
	return Artifact{}, fmt.Errorf("pki manifest %q: no %s for %s %s of cluster %q", m.Dir, k, a.Role, a.Purpose, a.Cluster)
}

// Credential is a certificate with its key, as files and as a Secret name.
type Credential struct {
	Cert, Key Artifact
	// CertPath (leaf then chain) and KeyPath are absolute.
	CertPath, KeyPath string
	// Secret is the name of the kubernetes.io/tls Secret holding both.
	Secret string
}

// Credential returns the certificate, key and Secret of role, purpose p
// and cluster, e.g. Credential(RoleQUIC, ServerExpired, "region-a").
func (m *Manifest) Credential(role Role, p Purpose, cluster string) (Credential, error) {
	cert, err := m.FindRole(role, p, cluster)
	if err != nil {
		return Credential{}, err
	}
	key, err := m.Companion(cert, KindKey)
	if err != nil {
		return Credential{}, err
	}
	c := Credential{Cert: cert, Key: key, CertPath: m.Path(cert), KeyPath: m.Path(key)}
	if s, err := m.Companion(cert, kindSecret); err == nil {
		c.Secret = s.Name
	}
	return c, nil
}

// TLSCertificate loads the credential for a crypto/tls server or client.
func (c Credential) TLSCertificate() (tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(c.CertPath, c.KeyPath)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("pki credential %s %s: %w", c.Cert.Role, c.Cert.Purpose, err)
	}
	return pair, nil
}

func (m *Manifest) clusters() []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range m.Artifacts {
		if a.Cluster != "" && !seen[a.Cluster] {
			seen[a.Cluster] = true
			out = append(out, a.Cluster)
		}
	}
	return out
}
