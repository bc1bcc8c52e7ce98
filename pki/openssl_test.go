package pki_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

const opensslPath = "/usr/bin/openssl"

// opensslVerify runs `openssl verify` on the leaf of a certificate artifact
// (its file also supplies the chain) against caFile, and returns the
// combined output and whether openssl accepted it.
func opensslVerify(t *testing.T, m *pki.Manifest, a pki.Artifact, caFile string) (string, bool) {
	t.Helper()
	purpose := "sslserver"
	if a.Role == pki.RoleClient {
		purpose = "sslclient"
	}
	args := []string{"verify", "-CAfile", caFile, "-untrusted", m.Path(a), "-purpose", purpose}
	if a.VerifyName != "" {
		args = append(args, "-verify_hostname", a.VerifyName)
	}
	out, err := exec.CommandContext(t.Context(), opensslPath, append(args, m.Path(a))...).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "openssl did not run: %s", out)
	}
	return string(out), err == nil
}

// TestOpenSSLAgrees: Debian's openssl accepts the good chains (with and
// without the intermediate, against the custom and the merged bundle and
// their own plane's bundle, not the other plane's) and
// rejects the wrong-root and expired ones for the same reasons crypto/x509
// gives.
func TestOpenSSLAgrees(t *testing.T) {
	if _, err := os.Stat(opensslPath); err != nil {
		t.Skipf("openssl is not installed at %s (apt-get install openssl); skipping the cross-check: %v", opensslPath, err)
	}
	for _, inter := range []bool{false, true} {
		t.Run(fmt.Sprintf("intermediate=%v", inter), func(t *testing.T) {
			req := defaultRequest(t)
			req.Intermediate = inter
			m := mint(t, req)
			custom := m.Path(find(t, m, pki.BundleCustom, ""))
			merged := m.Path(find(t, m, pki.BundleMerged, ""))
			wrongRoot := m.Path(find(t, m, pki.WrongRoot, ""))
			grpcOnly := m.Path(find(t, m, pki.BundleGRPC, ""))
			quicOnly := m.Path(find(t, m, pki.BundleQUIC, ""))

			for _, role := range []pki.Role{pki.RoleGRPC, pki.RoleQUIC} {
				for _, cluster := range []string{"region-a", "region-b"} {
					good, err := m.FindRole(role, pki.ServerGood, cluster)
					require.NoError(t, err)
					own, other := grpcOnly, quicOnly
					if role == pki.RoleQUIC {
						own, other = quicOnly, grpcOnly
					}
					for _, ca := range []string{custom, merged, own} {
						out, ok := opensslVerify(t, m, good, ca)
						require.True(t, ok, "openssl rejects %s against %s: %s", good.File, ca, out)
						require.Contains(t, out, ": OK")
					}
					out, ok := opensslVerify(t, m, good, other)
					require.False(t, ok, "openssl accepts %s against the other plane's root %s: %s", good.File, other, out)

					bad, err := m.FindRole(role, pki.ServerWrongRoot, cluster)
					require.NoError(t, err)
					out, ok = opensslVerify(t, m, bad, custom)
					require.False(t, ok, "openssl accepts %s: %s", bad.File, out)
					want := "unable to get local issuer certificate"
					if role == pki.RoleQUIC {
						want = "self-signed certificate in certificate chain" // the file ends with its (wrong) root
					}
					require.Contains(t, out, want)
					out, ok = opensslVerify(t, m, bad, wrongRoot)
					require.True(t, ok, "against its own root %s must verify: %s", bad.File, out)

					exp, err := m.FindRole(role, pki.ServerExpired, cluster)
					require.NoError(t, err)
					out, ok = opensslVerify(t, m, exp, custom)
					require.False(t, ok, out)
					require.Contains(t, out, "certificate has expired")
				}
			}
			client := find(t, m, pki.ClientGood, "workers")
			out, ok := opensslVerify(t, m, client, custom)
			require.True(t, ok, out)
			cwr := find(t, m, pki.ClientWrongRoot, "workers")
			out, ok = opensslVerify(t, m, cwr, custom)
			require.False(t, ok, out)
			require.Contains(t, out, "unable to get local issuer certificate")
		})
	}
}
