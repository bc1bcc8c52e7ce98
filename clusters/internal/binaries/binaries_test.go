package binaries

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestK8sGoModReplacesEveryStagingModule(t *testing.T) {
	mod := k8sGoMod(Pinned)
	require.Contains(t, mod, "require k8s.io/kubernetes v1.37.2\n")
	for _, m := range staging {
		require.Contains(t, mod, "\tk8s.io/"+m+" => k8s.io/"+m+" v0.37.2\n")
	}
}

func TestPathsFollowVersions(t *testing.T) {
	o := Options{CacheDir: "/c"}
	s := Paths(o)
	require.Equal(t, "/c/k8s-build-v1.37.2/bin/kube-apiserver", s.APIServer)
	require.Equal(t, "/c/etcd-v3.6.16/bin/etcd", s.Etcd)
	require.Equal(t, "/c/coredns-v1.14.7/bin/coredns", s.CoreDNS)
	o.Versions = Pinned
	o.Versions.Kubernetes = "v1.38.0"
	require.Equal(t, "/c/k8s-build-v1.38.0/bin/kube-scheduler", Paths(o).Scheduler, "a version bump builds into a new folder")
	require.Equal(t, "/c/kubectl-v1.38.0/bin/kubectl", KubectlPath(o), "kubectl in a folder of its own")
}

// A tiny Go binary built here carries its main module in its build info:
// verify accepts it for that module version only, and the stamp makes it
// fresh.
func TestVerifyAndStamp(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.test/tiny\n\ngo 1.26.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	bin := filepath.Join(dir, "bin", "tiny")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	c := component{name: "tiny", dir: dir, bins: []string{bin}, module: "example.test/tiny", version: "(devel)"}
	require.NoError(t, c.verify())
	require.False(t, c.fresh(), "no stamp yet")
	require.NoError(t, c.writeStamp("build"))
	require.True(t, c.fresh())

	bumped := c
	bumped.version = "v9.9.9"
	require.Error(t, bumped.verify())
	require.False(t, bumped.fresh(), "a stamp of another version is stale")

	require.NoError(t, os.Remove(bin))
	require.False(t, c.fresh(), "a missing binary is stale")
}

func TestAdoptEtcdName(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v3"), []byte("x"), 0o755))
	adoptEtcdName(filepath.Join(dir, "etcd"))
	_, err := os.Stat(filepath.Join(dir, "etcd"))
	require.NoError(t, err)
}

// busy finds a process whose working folder is inside the build folder.
func TestBusyFindsProcessInFolder(t *testing.T) {
	dir := t.TempDir()
	require.Zero(t, busy(dir))
	cmd := exec.Command("cat")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	require.Equal(t, cmd.Process.Pid, busy(dir))
	require.Zero(t, busy(dir+"-other"))
}

// The control plane's build module requires the harness's versions of the
// modules they share (so the Go build cache compiles those packages once),
// but not a replaced module, a staging module (replaced by the build
// module itself), etcd's (the API server keeps the client it ships with)
// or a development version.
func TestAlignModuleRequiresTheHarnesssVersions(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go tool")
	}
	dir := t.TempDir()
	require.NoError(t, writeK8sModule(dir, Pinned, []string{"kube-apiserver"}))
	var progress bytes.Buffer
	o := Options{CacheDir: t.TempDir(), Progress: &progress, alignWith: []*debug.Module{
		{Path: "golang.org/x/net", Version: "v0.60.0"},
		{Path: "google.golang.org/grpc", Version: "v1.85.0"},
		{Path: "k8s.io/client-go", Version: "v0.37.2"},
		{Path: "go.etcd.io/etcd/client/v3", Version: "v3.7.0"},
		{Path: "example.com/forked", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}},
		{Path: "example.com/local", Version: "(devel)"},
	}}
	o.defaults()
	c := component{name: "kube-apiserver", dir: dir}
	aligned, err := alignModule(t.Context(), o, c)
	require.NoError(t, err)
	require.True(t, aligned)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	require.Contains(t, string(mod), "golang.org/x/net v0.60.0")
	require.Contains(t, string(mod), "google.golang.org/grpc v1.85.0")
	require.NotContains(t, string(mod), "example.com/")
	require.NotContains(t, string(mod), "go.etcd.io/", "the API server keeps its own etcd client")
	require.NotRegexp(t, `(?m)^(require)?\s+k8s\.io/client-go v0\.37\.2$`, string(mod), "a staging module stays replaced only")
	require.Contains(t, progress.String(), "versions of 2 modules")

	o.alignWith = []*debug.Module{{Path: "example.com/local", Version: "(devel)"}}
	aligned, err = alignModule(t.Context(), o, c)
	require.NoError(t, err)
	require.False(t, aligned, "nothing to require")
}
