package pki_test

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nvcf/conformance/pki"
)

func TestSecrets(t *testing.T) {
	req := defaultRequest(t)
	req.Intermediate = true
	m := mint(t, req)
	rootPEM, err := os.ReadFile(m.Path(find(t, m, pki.Root, "")))
	require.NoError(t, err)
	quicRootPEM, err := os.ReadFile(m.Path(find(t, m, pki.QUICRoot, "")))
	require.NoError(t, err)

	for _, tc := range []struct {
		cluster string
		want    int
	}{{"region-a", 2*len(pki.ServerPurposes) + len(pki.IngressPurposes)}, {"region-b", 2*len(pki.ServerPurposes) + len(pki.IngressPurposes)}, {"workers", len(pki.ClientPurposes)}} {
		secrets, err := m.Secrets(tc.cluster)
		require.NoError(t, err)
		require.Len(t, secrets, tc.want, tc.cluster)
		for _, s := range secrets {
			require.Equal(t, "Secret", s.Kind)
			require.Equal(t, "v1", s.APIVersion)
			require.Equal(t, corev1.SecretTypeTLS, s.Type)
			require.Empty(t, s.Namespace, "the deploy code sets the namespace")
			require.Equal(t, pki.ManagedBy, s.Labels[pki.LabelManagedBy])
			role, purpose := pki.Role(s.Labels[pki.LabelRole]), pki.Purpose(s.Labels[pki.LabelPurpose])
			require.Equal(t, pki.SecretName(role, purpose), s.Name)
			cred, err := m.Credential(role, purpose, tc.cluster)
			require.NoError(t, err)
			require.Equal(t, s.Name, cred.Secret)
			crt, err := os.ReadFile(cred.CertPath)
			require.NoError(t, err)
			key, err := os.ReadFile(cred.KeyPath)
			require.NoError(t, err)
			require.Equal(t, crt, s.Data[corev1.TLSCertKey])
			require.Equal(t, key, s.Data[corev1.TLSPrivateKeyKey])
			if role == pki.RoleQUIC {
				require.Equal(t, quicRootPEM, s.Data["ca.crt"], "ca.crt is the root of the QUIC plane")
			} else {
				require.Equal(t, rootPEM, s.Data["ca.crt"])
			}
			_, err = tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
			require.NoError(t, err, "%s: certificate and key must pair", s.Name)
			expect := string(cred.Cert.ExpectedFailure)
			if expect == "" {
				expect = "pass"
			}
			require.Equal(t, expect, s.Labels[pki.LabelExpect])
		}
	}
	none, err := m.Secrets("no-such-cluster")
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestConfigMaps(t *testing.T) {
	m := mint(t, defaultRequest(t))
	cms, err := m.ConfigMaps()
	require.NoError(t, err)
	byName := map[string]corev1.ConfigMap{}
	for _, cm := range cms {
		require.Equal(t, "ConfigMap", cm.Kind)
		require.Len(t, cm.Data, 1)
		byName[cm.Name] = cm
	}
	require.Len(t, byName, len(pki.BundlePurposes)-1, "every bundle but the missing one")
	for _, p := range pki.BundlePurposes {
		if p == pki.BundleMissing {
			continue
		}
		cm, ok := byName[pki.ConfigMapName(p)]
		require.True(t, ok, p)
		want, err := os.ReadFile(m.Path(find(t, m, p, "")))
		require.NoError(t, err)
		require.Equal(t, string(want), cm.Data[pki.TrustBundleKey], p)
	}
	merged := byName[pki.TrustBundleConfigMap]
	require.Equal(t, string(pki.BundleMerged), merged.Labels[pki.LabelPurpose])

	// The YAML files are what `kubectl apply -f` reads.
	cmA, err := m.Companion(find(t, m, pki.BundleMerged, ""), pki.KindConfigMap)
	require.NoError(t, err)
	data, err := os.ReadFile(m.Path(cmA))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "apiVersion: v1\n"), string(data[:40]))
	var back corev1.ConfigMap
	require.NoError(t, yaml.UnmarshalStrict(data, &back))
	require.Equal(t, pki.TrustBundleConfigMap, back.Name)
}
