package pki

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/pki/internal/cfca"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The trust bundle ConfigMap that the worker side mounts, as NVCF names it.
const (
	TrustBundleConfigMap = "nvcf-transport-trust-bundle"
	TrustBundleKey       = "nvcf-ca-bundle.pem"
)

// Labels put on every Secret and ConfigMap.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "nvcf-conformance-pki"
	labelPurpose   = "conformance.nvcf.test/purpose"
	labelRole      = "conformance.nvcf.test/role"
	labelExpect    = "conformance.nvcf.test/expect"
)

// SecretName is the name of the kubernetes.io/tls Secret of a credential:
// "nvcf-grpc-server-good", "nvcf-quic-server-expired", "nvcf-client-good".
func SecretName(role Role, p Purpose) string {
	if role == RoleClient {
		return "nvcf-" + string(p)
	}
	return "nvcf-" + string(role) + "-" + string(p)
}

// ConfigMapName is the name of a bundle's ConfigMap: the merged bundle is
// TrustBundleConfigMap, the others add a suffix ("-custom", "-empty",
// "-malformed"). The missing bundle has none.
func ConfigMapName(p Purpose) string {
	if p == bundleMerged {
		return TrustBundleConfigMap
	}
	return TrustBundleConfigMap + "-" + string(p[len("bundle-"):])
}

func labels(a Artifact) map[string]string {
	l := map[string]string{labelManagedBy: managedBy, labelPurpose: string(a.Purpose), labelExpect: "pass"}
	if a.Role != "" {
		l[labelRole] = string(a.Role)
	}
	if a.ExpectedFailure != "" {
		l[labelExpect] = string(a.ExpectedFailure)
	}
	return l
}

// kube writes a Secret per leaf certificate and a ConfigMap per written
// bundle (except the missing one), as YAML, and records them.
func (b *builder) kube() error {
	var certs, bundles []Artifact
	for _, a := range b.m.Artifacts {
		switch {
		case a.Kind == KindCert && a.Role != "":
			certs = append(certs, a)
		case a.Kind == KindBundle && !a.Absent:
			bundles = append(bundles, a)
		}
	}
	for _, a := range certs {
		key, err := b.m.Companion(a, KindKey)
		if err != nil {
			return err
		}
		crt, err := os.ReadFile(filepath.Join(b.dir, a.File))
		if err != nil {
			return err
		}
		k, err := os.ReadFile(filepath.Join(b.dir, key.File))
		if err != nil {
			return err
		}
		s := corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: SecretName(a.Role, a.Purpose), Labels: labels(a)},
			Type:       corev1.SecretTypeTLS,
			Data: map[string][]byte{
				corev1.TLSCertKey:       crt,
				corev1.TLSPrivateKeyKey: k,
				"ca.crt":                b.rootOf(a.Role).CertPEM,
			},
		}
		out := Artifact{File: filepath.Join("k8s", a.Cluster, s.Name+".yaml"), Kind: kindSecret, Purpose: a.Purpose, Cluster: a.Cluster, Role: a.Role, Name: s.Name}
		if err := b.writeObject(&out, &s, 0o600); err != nil {
			return err
		}
	}
	for _, a := range bundles {
		data, err := os.ReadFile(filepath.Join(b.dir, a.File))
		if err != nil {
			return err
		}
		cm := corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName(a.Purpose), Labels: labels(a)},
			Data:       map[string]string{TrustBundleKey: string(data)},
		}
		out := Artifact{File: filepath.Join("k8s", cm.Name+".yaml"), Kind: kindConfigMap, Purpose: a.Purpose, Name: cm.Name}
		if err := b.writeObject(&out, &cm, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rootOf is the trusted root of role's good certificates.
func (b *builder) rootOf(role Role) *cfca.CA {
	if role == RoleQUIC {
		return b.quicRoot
	}
	return b.root
}

func (b *builder) writeObject(a *Artifact, obj any, perm os.FileMode) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", a.Kind, a.Name, err)
	}
	return b.write(a, data, perm)
}

// Secrets returns the TLS Secrets to apply in cluster (its server or client
// credentials, good and bad), read from the folder's YAML files. They
// carry no namespace; the caller sets it.
func (m *Manifest) Secrets(cluster string) ([]corev1.Secret, error) {
	var out []corev1.Secret
	for _, a := range m.Select(func(a Artifact) bool { return a.Kind == kindSecret && a.Cluster == cluster }) {
		var s corev1.Secret
		if err := m.readObject(a, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ConfigMaps returns the trust bundle ConfigMaps (the same for every
// cluster): TrustBundleConfigMap with the merged bundle, and the custom,
// empty and malformed variants. They carry no namespace.
func (m *Manifest) ConfigMaps() ([]corev1.ConfigMap, error) {
	var out []corev1.ConfigMap
	for _, a := range m.Select(func(a Artifact) bool { return a.Kind == kindConfigMap }) {
		var cm corev1.ConfigMap
		if err := m.readObject(a, &cm); err != nil {
			return nil, err
		}
		out = append(out, cm)
	}
	return out, nil
}

func (m *Manifest) readObject(a Artifact, into any) error {
	data, err := os.ReadFile(m.Path(a))
	if err != nil {
		return fmt.Errorf("pki %s %s: %w", a.Kind, a.Name, err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("pki %s %s (%s): %w", a.Kind, a.Name, m.Path(a), err)
	}
	return nil
}
