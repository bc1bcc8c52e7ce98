package run

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBundleRunsWithoutGo builds bin/ with `make build`, copies it to an
// empty folder and runs it there with no Go toolchain on PATH and no source
// tree around: the version, the case list, and the suite through its JUnit.
func TestBundleRunsWithoutGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole bundle")
	}
	built := t.TempDir()
	make := exec.Command("make", "-C", "../..", "build", "BIN="+built)
	out, err := make.CombinedOutput()
	require.NoError(t, err, "make build: %s", out)

	dir := t.TempDir()
	entries, err := os.ReadDir(built)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(built, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o755))
	}
	require.NoError(t, checkBundle(dir))
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir()}
	_, err = exec.LookPath("go")
	require.NoError(t, err, "the test itself runs with Go")
	harness := func(args ...string) string {
		cmd := exec.Command(filepath.Join(dir, "harness"), args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "harness %v: %s", args, out)
		return string(out)
	}
	v := harness("version")
	require.Contains(t, v, "kubernetes v1.37.2")
	require.NotContains(t, v, "commit unknown")
	cases := harness("list", "--cases")
	require.Contains(t, cases, "tls/wrong-root[workload=statefulset,trust=system]")
	require.Regexp(t, `\d+ tests in 16 cells`, cases)
	require.Contains(t, cases, "discovery/srv-dashed-ip[workload=deployment,trust=system,discovery=dns]")

	// The suite runs from the copy: with no run config it skips, and the
	// JUnit still comes out (gotestsum and test2json need no Go either).
	t.Setenv("PATH", env[0])
	junit := filepath.Join(dir, "junit.xml")
	var log strings.Builder
	require.NoError(t, runSuite(context.Background(), dir, dir, "", junit, nil, &log), log.String())
	data, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.Contains(t, string(data), `name="TestScenarios"`)
}
