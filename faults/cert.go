package faults

import (
	"context"
	"fmt"
	"maps"
	"os"

	"github.com/nvcf/conformance/faults/internal/journal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CertRotate rewrites a TLS Secret in place with another certificate and
// key (good → good, good → wrong root, good → wrong host, expired); the
// servers pick it up on their reload (every 30 s in the real system). The
// undo restores the Secret's original data.
type CertRotate struct {
	Cluster   Cluster
	Namespace string
	Secret    string
	// Cert and Key are PEM (tls.crt, tls.key).
	Cert, Key []byte
	// ca, when set, replaces ca.crt (PEM).
	ca []byte
	// CertFile and KeyFile are read when Cert or Key is empty, e.g. a
	// pki.Credential's CertPath and KeyPath.
	CertFile, KeyFile string
	// Variant names the new certificate for reports ("good", "wrong-root",
	// "wrong-host", "expired").
	Variant string
}

// Kind is kindCert.
func (CertRotate) Kind() Kind { return kindCert }

// Describe names the Secret and the variant.
func (c CertRotate) Describe() string {
	return fmt.Sprintf("secret %s/%s -> %s", c.Namespace, c.Secret, c.Variant)
}

func (c CertRotate) inject(ctx context.Context, e *env) (undoFunc, error) {
	if len(c.Cert) == 0 && c.CertFile != "" {
		b, err := os.ReadFile(c.CertFile)
		if err != nil {
			return nil, fmt.Errorf("rotate %s/%s: read certificate: %w", c.Namespace, c.Secret, err)
		}
		c.Cert = b
	}
	if len(c.Key) == 0 && c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("rotate %s/%s: read key: %w", c.Namespace, c.Secret, err)
		}
		c.Key = b
	}
	if len(c.Cert) == 0 || len(c.Key) == 0 {
		return nil, fmt.Errorf("rotate %s/%s: a certificate and key are required (Cert/Key PEM or CertFile/KeyFile)", c.Namespace, c.Secret)
	}
	cs, err := c.Cluster.client()
	if err != nil {
		return nil, err
	}
	s, err := cs.CoreV1().Secrets(c.Namespace).Get(ctx, c.Secret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", c.Namespace, c.Secret, err)
	}
	orig := maps.Clone(s.Data)
	if err := e.persist(journal.Cleanup{Secret: &journal.Secret{Cluster: c.Cluster.ref(), Namespace: c.Namespace, Name: c.Secret, Data: orig}}); err != nil {
		return nil, err
	}
	data := maps.Clone(s.Data)
	if data == nil {
		data = map[string][]byte{}
	}
	data[corev1.TLSCertKey] = c.Cert
	data[corev1.TLSPrivateKeyKey] = c.Key
	if len(c.ca) > 0 {
		data["ca.crt"] = c.ca
	}
	if err := writeSecret(ctx, cs, c.Namespace, c.Secret, data); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return writeSecret(ctx, cs, c.Namespace, c.Secret, orig) }, nil
}

// writeSecret replaces a Secret's data, retrying on a conflicting update.
func writeSecret(ctx context.Context, cs kubernetes.Interface, ns, name string, data map[string][]byte) error {
	var err error
	for range 5 {
		var s *corev1.Secret
		s, err = cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get secret %s/%s: %w", ns, name, err)
		}
		s.Data = data
		s.StringData = nil
		if _, err = cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("update secret %s/%s: %w", ns, name, err)
	}
	return nil
}

func restoreSecret(ctx context.Context, s journal.Secret) error {
	cs, err := clientFor(s.Cluster)
	if err != nil {
		return err
	}
	return writeSecret(ctx, cs, s.Namespace, s.Name, s.Data)
}
