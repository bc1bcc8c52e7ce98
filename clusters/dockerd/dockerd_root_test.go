package dockerd

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
)

// A privileged container starts on this machine through the shim where the
// bounding set requires it, and the host is as before once the daemon stops.
func TestPrivilegedContainerThroughTheShim(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: starting dockerd needs root")
	}
	hostlock.Exclusive(t)
	if _, err := exec.LookPath("dockerd"); err != nil {
		t.Skip("skipping: dockerd is not installed (hack/deps.sh docker)")
	}
	if _, err := os.Stat("/sys/class/net/docker0"); err == nil {
		t.Skip("skipping: another Docker daemon runs here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	shim := filepath.Join(dir, "nvcf-runc")
	hello := filepath.Join(dir, "rootfs", "hello")
	for pkg, out := range map[string]string{"github.com/nvcf/conformance/cmd/nvcf-runc": shim, "./testdata/hello": hello} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	before, err := snapshot(ctx)
	require.NoError(t, err)
	d, err := Start(ctx, Config{Dir: filepath.Join(dir, "d"), Shim: shim})
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Stop(context.Background())) }()

	docker := func(stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "/usr/bin/docker", append([]string{"-H", d.Host()}, args...)...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "docker %v: %s", args, out)
		return string(out)
	}
	if _, err := os.Stat("/usr/bin/docker"); err != nil {
		t.Skip("skipping: Debian's docker client is not installed")
	}
	docker(tarOf(t, hello), "import", "-", "nvcf-hello:test")
	info := docker(nil, "info", "--format", "{{.DefaultRuntime}}")
	need, err := NeedsShim()
	require.NoError(t, err)
	if need {
		require.Equal(t, ShimRuntime, strings.TrimSpace(info))
	} else {
		require.Equal(t, "runc", strings.TrimSpace(info), "no shim where the bounding set has CAP_SYS_RESOURCE")
	}
	out := docker(nil, "run", "--rm", "--privileged", "--network", "none", "nvcf-hello:test", "/hello")
	require.Contains(t, out, "CapBnd:", "the privileged container ran")

	require.NoError(t, d.Stop(ctx))
	after, err := snapshot(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "sysctls, policies, nftables tables and the trust key as before")
	_, err = os.Stat("/sys/class/net/docker0")
	require.ErrorIs(t, err, os.ErrNotExist, "docker0 is gone")
}

func tarOf(t *testing.T, file string) []byte {
	t.Helper()
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: filepath.Base(file), Mode: 0o755, Size: int64(len(body))}))
	_, err = tw.Write(body)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return b.Bytes()
}
