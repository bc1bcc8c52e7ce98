package kubelet

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/stretchr/testify/require"
)

// RunWrapper, in a private mount and UTS namespace made by unshare(1)
// (as `ip netns exec` would), mounts a volume at its path and execs.
func TestRunWrapper(t *testing.T) {
	if err := podnet.RequireRoot(); err != nil {
		t.Skipf("skipping: mounts need root: %v", err)
	}
	vol := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(vol, "ca.crt"), []byte("CA\n"), 0o644))
	target := filepath.Join(t.TempDir(), "var/run/secrets")
	spec, err := json.Marshal(launch{Hostname: "sg-0", Dir: "/",
		Mounts: []mount{{Source: vol, Target: target, ReadOnly: true}},
		Argv:   []string{"sh", "-c", "cat " + target + "/ca.crt; hostname; touch " + target + "/x 2>/dev/null && echo writable || echo read-only"}})
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	out, err := exec.Command("unshare", "--mount", "--uts", self, WrapperCommand, string(spec)).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "CA\nsg-0\nread-only\n", string(out))
	entries, err := os.ReadDir(target)
	require.NoError(t, err)
	require.Empty(t, entries, "the mount stayed inside the namespace")

	out, err = exec.Command(self, WrapperCommand, "{not json").CombinedOutput()
	require.Error(t, err)
	require.True(t, strings.Contains(string(out), "bad launch spec"), string(out))
}
