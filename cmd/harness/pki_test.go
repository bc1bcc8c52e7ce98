package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/pki"
)

func TestPKIMintAndInspect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	topo := filepath.Join("..", "..", "topologies", "default.yaml")
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"pki", "mint", "--topology", topo, "--out", dir}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "minted ")

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"pki", "mint", "--topology", topo, "--out", dir}, &out, &errOut))
	require.Contains(t, out.String(), "reused ")

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"pki", "inspect", dir}, &out, &errOut))
	table := out.String()
	require.Contains(t, table, "FILE")
	require.Contains(t, table, "VERIFIES")
	row := func(file string) string { return tableRow(t, table, file) }
	require.Regexp(t, `server-good\s+stargate\.region-a\.nvcf\.test .* yes\s+ok`, row("region-a/grpc/server-good.pem"))
	require.Regexp(t, `no: unknown-authority\s+ok`, row("region-b/quic/server-wrong-root.pem"))
	require.Regexp(t, `no: bad-certificate\s+ok`, row("region-a/grpc/server-cn-only.pem"))
	require.Regexp(t, `no: no-trust\s+ok`, row("bundles/malformed.pem"))
	require.NotContains(t, table, "-key.pem", "keys only with --all")

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"pki", "inspect", "--all", dir}, &out, &errOut))
	require.Contains(t, out.String(), "region-a/grpc/server-good-key.pem")

	// Swap the good certificate for the wrong-root one: inspect must notice.
	m, err := pki.Load(dir)
	require.NoError(t, err)
	good, err := m.Find(pki.ServerGood, "region-a")
	require.NoError(t, err)
	wrong, err := m.Find(pki.ServerWrongRoot, "region-a")
	require.NoError(t, err)
	data, err := os.ReadFile(m.Path(wrong))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(m.Path(good), data, 0o644))
	out.Reset()
	err = run(t.Context(), []string{"pki", "inspect", dir}, &out, &errOut)
	require.ErrorContains(t, err, "1 artifacts do not behave as intended")
	require.Regexp(t, `no: unknown-authority\s+UNEXPECTED \(want pass\)`, tableRow(t, out.String(), "region-a/grpc/server-good.pem"))
}

// tableRow returns the inspect table's row for file.
func tableRow(t *testing.T, table, file string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, file+" ") {
			return l
		}
	}
	t.Fatalf("no row for %s in\n%s", file, table)
	return ""
}

func TestPKIBadArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	require.ErrorContains(t, run(t.Context(), []string{"pki"}, &out, &errOut), "mint or inspect")
	require.ErrorContains(t, run(t.Context(), []string{"pki", "frobnicate"}, &out, &errOut), `"frobnicate"`)
	require.ErrorContains(t, run(t.Context(), []string{"pki", "mint", "--out", t.TempDir()}, &out, &errOut), "--topology and --out are required")
	require.ErrorContains(t, run(t.Context(), []string{"pki", "inspect"}, &out, &errOut), "one folder")
	require.ErrorContains(t, run(t.Context(), []string{"pki", "inspect", t.TempDir()}, &out, &errOut), "harness pki mint")
	topo := filepath.Join("..", "..", "topologies", "default.yaml")
	err := run(t.Context(), []string{"pki", "mint", "--topology", topo, "--out", filepath.Join(t.TempDir(), "p"), "--validity", "1m"}, &out, &errOut)
	require.ErrorContains(t, err, "validity 1m0s")
}
