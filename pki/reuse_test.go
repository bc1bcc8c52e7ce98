package pki_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

func rootSerial(t *testing.T, m *pki.Manifest) string {
	t.Helper()
	return certs(t, m.Path(find(t, m, pki.Root, "")))[0].SerialNumber.String()
}

func TestReuseAndReMint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	sys := filepath.Join(t.TempDir(), "system.pem")
	req := defaultRequest(t)
	req.SystemRoots = sys // absent for now
	first, err := pki.Mint(t.Context(), req, dir)
	require.NoError(t, err)
	require.False(t, first.Reused)

	t.Run("unchanged inputs reuse the folder", func(t *testing.T) {
		again, err := pki.Mint(t.Context(), req, dir)
		require.NoError(t, err)
		require.True(t, again.Reused)
		require.True(t, first.MintedAt.Equal(again.MintedAt))
		require.Equal(t, rootSerial(t, first), rootSerial(t, again))
	})
	t.Run("a changed request re-mints", func(t *testing.T) {
		before := rootSerial(t, first)
		changed := req
		changed.Validity = 10 * 24 * time.Hour
		m, err := pki.Mint(t.Context(), changed, dir)
		require.NoError(t, err)
		require.False(t, m.Reused)
		require.NotEqual(t, first.InputHash, m.InputHash)
		require.NotEqual(t, before, rootSerial(t, m))
		a := find(t, m, pki.ServerGood, "region-a")
		require.InDelta(t, (10*24*time.Hour + time.Hour).Seconds(), a.NotAfter.Sub(a.NotBefore).Seconds(), 60)
		first = m
		req = changed
	})
	t.Run("changed system roots re-mint", func(t *testing.T) {
		other := mint(t, pki.Request{Clients: []pki.ClientIdentity{{Cluster: "w", Name: "pylon.w.test"}}})
		data, err := os.ReadFile(other.Path(find(t, other, pki.Root, "")))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(sys, data, 0o644))
		m, err := pki.Mint(t.Context(), req, dir)
		require.NoError(t, err)
		require.False(t, m.Reused)
		require.True(t, m.System.Present)
		first = m
	})
	t.Run("a modified file re-mints", func(t *testing.T) {
		a := find(t, first, pki.ServerGood, "region-b")
		require.NoError(t, os.WriteFile(first.Path(a), []byte("tampered"), 0o644))
		m, err := pki.Mint(t.Context(), req, dir)
		require.NoError(t, err)
		require.False(t, m.Reused)
		certs(t, m.Path(find(t, m, pki.ServerGood, "region-b")))
		first = m
	})
	t.Run("a created missing bundle re-mints", func(t *testing.T) {
		a := find(t, first, pki.BundleMissing, "")
		require.NoError(t, os.WriteFile(first.Path(a), nil, 0o644))
		m, err := pki.Mint(t.Context(), req, dir)
		require.NoError(t, err)
		require.False(t, m.Reused)
		require.NoFileExists(t, m.Path(a))
	})
	t.Run("an unreadable manifest re-mints", func(t *testing.T) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, pki.ManifestFile), []byte("{"), 0o644))
		m, err := pki.Mint(t.Context(), req, dir)
		require.NoError(t, err)
		require.False(t, m.Reused)
		_, err = pki.Load(dir)
		require.NoError(t, err)
	})
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary folders left beside the output")
}

// TestTimeRelativeStaleness: a folder is stale once a good certificate has
// less than a quarter of its validity left or the not-yet-valid one is
// about to become valid.
func TestTimeRelativeStaleness(t *testing.T) {
	req := defaultRequest(t)
	req.Validity = 8 * time.Hour
	m := mint(t, req)
	at := func(d time.Duration) string { return pki.TimeStale(m, m.MintedAt.Add(d)) }
	require.Empty(t, at(0))
	require.Empty(t, at(30*time.Minute))
	require.Contains(t, at(3*time.Hour), "server-not-yet-valid", "becomes valid at +4h, margin 2h")
	require.Contains(t, at(7*time.Hour), "expires")
	require.Contains(t, at(-2*time.Hour), "not valid before", "clock moved back")
	expiredOnly := *m
	expiredOnly.Artifacts = m.Select(func(a pki.Artifact) bool { return a.Purpose == pki.ServerExpired })
	require.Empty(t, pki.TimeStale(&expiredOnly, m.MintedAt))
	require.Contains(t, pki.TimeStale(&expiredOnly, m.MintedAt.Add(-5*24*time.Hour)), "no longer expired")
}
