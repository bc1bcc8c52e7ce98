package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/defects"
)

// buildRef builds the reference binary as shipped.
func buildRef(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nvcf-ref")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// TestBinaryRefusesDefectOutsideTestProfile runs the built binary with a
// defect switch and no test profile (and with a wrong profile): it must
// exit non-zero before the role starts, naming the switch and the profile.
func TestBinaryRefusesDefectOutsideTestProfile(t *testing.T) {
	bin := buildRef(t)
	for _, profile := range []string{"", "production", "Test"} {
		cmd := exec.Command(bin, "stargate", "--stargate-id=sg-0", "--grpc-addr=127.0.0.1:0", "--status-addr=127.0.0.1:0", "--models-addr=")
		cmd.Env = append(os.Environ(), defects.EnvVar+"="+string(defects.StargateTunnelTokenUnchecked))
		if profile != "" {
			cmd.Env = append(cmd.Env, defects.ProfileEnvVar+"="+profile)
		}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "profile %q: the binary must refuse, got: %s", profile, out)
		require.Equal(t, 1, exit.ExitCode())
		require.Contains(t, string(out), "refused: defects are switched on only in the test profile", "profile %q", profile)
		require.NotContains(t, string(out), `"msg"`, "profile %q: the role must not have started", profile)
	}
}

// TestBinaryRefusesDefectOfAnotherRole: even in the test profile a defect
// switches on only in its own role.
func TestBinaryRefusesDefectOfAnotherRole(t *testing.T) {
	err := run(t.Context(), []string{"ingress"}, func(k string) string {
		return map[string]string{defects.EnvVar: string(defects.PylonHTTPSDialsPlaintext), defects.ProfileEnvVar: defects.ProfileTest}[k]
	}, nil, nil)
	require.ErrorContains(t, err, "belongs to role pylon, not ingress")
	require.False(t, defects.On(defects.PylonHTTPSDialsPlaintext))
	require.False(t, strings.Contains(err.Error(), "refused: defects"))
}
