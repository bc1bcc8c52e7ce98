package pki_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

func TestBadRequests(t *testing.T) {
	good := func() pki.Request {
		return pki.Request{Clusters: []pki.ClusterNames{{
			Name:      "region-a",
			DialHosts: []string{"stargate.region-a.nvcf.test"},
			QUICNames: []string{"*.sg.region-a.nvcf.test"},
		}}}
	}
	require.NoError(t, good().Validate())
	for name, tc := range map[string]struct {
		edit func(*pki.Request)
		want string
	}{
		"nothing to mint":            {func(r *pki.Request) { r.Clusters = nil }, "no clusters and no clients"},
		"empty dial hosts":           {func(r *pki.Request) { r.Clusters[0].DialHosts = nil }, `clusters[0] "region-a" dialHosts: empty`},
		"empty quic names":           {func(r *pki.Request) { r.Clusters[0].QUICNames = []string{} }, "quicNames: empty"},
		"underscore":                 {func(r *pki.Request) { r.Clusters[0].DialHosts[0] = "bad_host.nvcf.test" }, `dialHosts[0] "bad_host.nvcf.test": label "bad_host"`},
		"single label":               {func(r *pki.Request) { r.Clusters[0].DialHosts[0] = "localhost" }, "not a fully qualified name"},
		"empty name":                 {func(r *pki.Request) { r.Clusters[0].DialHosts = []string{""} }, "empty name"},
		"wildcard dial host":         {func(r *pki.Request) { r.Clusters[0].DialHosts[0] = "*.nvcf.test" }, "wildcards are not allowed"},
		"inner wildcard":             {func(r *pki.Request) { r.Clusters[0].QUICNames[0] = "sg.*.nvcf.test" }, "leftmost label"},
		"bare wildcard zone":         {func(r *pki.Request) { r.Clusters[0].QUICNames[0] = "*.test" }, "two labels after"},
		"bad cluster name":           {func(r *pki.Request) { r.Clusters[0].Name = "Region A" }, `"Region A": name must be a DNS label`},
		"duplicate cluster":          {func(r *pki.Request) { r.Clusters = append(r.Clusters, r.Clusters[0]) }, "named twice"},
		"authority covers dial host": {func(r *pki.Request) { r.Clusters[0].Authorities = []string{"*.region-a.nvcf.test"} }, `authorities[0] "*.region-a.nvcf.test": covers the dial host`},
		"negative validity":          {func(r *pki.Request) { r.Validity = -time.Hour }, "validity -1h0m0s: negative"},
		"too short validity":         {func(r *pki.Request) { r.Validity = time.Minute }, "shorter than the minimum"},
		"too long validity":          {func(r *pki.Request) { r.Validity = 100 * 365 * 24 * time.Hour }, "longer than the maximum"},
		"client without cluster":     {func(r *pki.Request) { r.Clients = []pki.ClientIdentity{{Name: "pylon.w.test"}} }, "clients[0]: cluster"},
		"bad client name": {func(r *pki.Request) {
			r.Clients = []pki.ClientIdentity{{Cluster: "w", Name: "pylon..w.test"}}
		}, `clients[0] name[0] "pylon..w.test"`},
		"two clients in a cluster": {func(r *pki.Request) {
			r.Clients = []pki.ClientIdentity{{Cluster: "w", Name: "a.w.test"}, {Cluster: "w", Name: "b.w.test"}}
		}, "already has a client"},
	} {
		t.Run(name, func(t *testing.T) {
			r := good()
			tc.edit(&r)
			err := r.Validate()
			require.ErrorContains(t, err, tc.want)
			_, err = pki.Mint(t.Context(), r, filepath.Join(t.TempDir(), "pki"))
			require.ErrorContains(t, err, tc.want, "Mint validates too")
		})
	}
}

func TestBadOutputFolders(t *testing.T) {
	req := defaultRequest(t)
	base := t.TempDir()
	file := filepath.Join(base, "a-file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))

	_, err := pki.Mint(t.Context(), req, filepath.Join(file, "pki"))
	require.ErrorContains(t, err, filepath.Join(file, "pki"))
	require.ErrorContains(t, err, "choose a folder you can write")

	_, err = pki.Mint(t.Context(), req, file)
	require.ErrorContains(t, err, "is not a folder")

	busy := filepath.Join(base, "busy")
	require.NoError(t, os.MkdirAll(busy, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("mine"), 0o644))
	_, err = pki.Mint(t.Context(), req, busy)
	require.ErrorContains(t, err, "not empty")
	require.FileExists(t, filepath.Join(busy, "notes.txt"), "someone else's folder is left alone")

	_, err = pki.Mint(t.Context(), req, "")
	require.ErrorContains(t, err, "empty path")
}

func TestMintHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := filepath.Join(t.TempDir(), "pki")
	_, err := pki.Mint(ctx, defaultRequest(t), dir)
	require.ErrorIs(t, err, context.Canceled)
	require.NoDirExists(t, dir)
}

func TestWrongHostName(t *testing.T) {
	require.Equal(t, "wrong-host.region-a.nvcf.test", pki.WrongHost("stargate.region-a.nvcf.test", []string{"stargate.region-a.nvcf.test", "*.sg.region-a.nvcf.test"}))
	// The first candidate is covered by the wildcard, so the next one is taken.
	require.Equal(t, "wrong-host.stargate-0.sg.a.test", pki.WrongHost("stargate-0.sg.a.test", []string{"*.sg.a.test"}))
	require.Equal(t, "wrong-host.invalid", pki.WrongHost("x.a.test", []string{"*.a.test", "*.x.a.test"}))
}
