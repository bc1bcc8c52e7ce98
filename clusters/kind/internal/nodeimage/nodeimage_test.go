package nodeimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// resolveIn follows relative and absolute symlinks inside the root, also
// through symlinked folders (merged /usr), never out of it.
func TestResolveInStaysInTheRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/lib/x86_64-linux-gnu"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/lib64"), 0o755))
	require.NoError(t, os.Symlink("usr/lib", filepath.Join(root, "lib")))
	require.NoError(t, os.Symlink("usr/lib64", filepath.Join(root, "lib64")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "usr/lib/x86_64-linux-gnu/libz.so.1.2.13"), []byte("z"), 0o644))
	require.NoError(t, os.Symlink("libz.so.1.2.13", filepath.Join(root, "usr/lib/x86_64-linux-gnu/libz.so.1")))
	// Absolute: taken inside the root, not on the host.
	require.NoError(t, os.Symlink("/lib/x86_64-linux-gnu/libz.so.1", filepath.Join(root, "usr/lib64/libz-abs.so")))

	p, err := resolveIn(root, "/lib/x86_64-linux-gnu/libz.so.1")
	require.NoError(t, err)
	require.Equal(t, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", p)
	p, err = resolveIn(root, "/lib64/libz-abs.so")
	require.NoError(t, err)
	require.Equal(t, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", p)
	_, err = resolveIn(root, "/lib/x86_64-linux-gnu/libnone.so")
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.Symlink("loop", filepath.Join(root, "loop")))
	_, err = resolveIn(root, "/loop")
	require.ErrorContains(t, err, "too many symlinks")
}

// A static Go binary needs no library; a dynamic one needs the loader and
// libc, found in the root it is given (here the host's own, a Debian).
func TestSharedLibs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(src, []byte("package main\n\nimport \"os/user\"\n\nfunc main() { _, _ = user.Current() }\n"), 0o644))
	build := func(out string, cgo string) {
		cmd := exec.Command("go", "build", "-o", out, src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOWORK=off", "GOFLAGS=-buildvcs=false")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	build(filepath.Join(dir, "static"), "0")
	require.True(t, static(filepath.Join(dir, "static")))
	libs, err := sharedLibs("/nonexistent", filepath.Join(dir, "static"))
	require.NoError(t, err)
	require.Empty(t, libs)

	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler for the dynamic case")
	}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libc.so.6"); err != nil {
		t.Skip("not a Debian amd64 host")
	}
	build(filepath.Join(dir, "dynamic"), "1")
	require.False(t, static(filepath.Join(dir, "dynamic")))
	libs, err = sharedLibs("/", filepath.Join(dir, "dynamic"))
	require.NoError(t, err)
	require.Contains(t, libs, loader)
	require.Contains(t, libs, "/usr/lib/x86_64-linux-gnu/libc.so.6")
	_, err = sharedLibs(t.TempDir(), filepath.Join(dir, "dynamic"))
	require.ErrorContains(t, err, "lacks", "a root without the loader is refused")
}

// The same entries give the same bytes: folders first, fixed times and
// owners, whatever the order they were added in.
func TestLayerIsDeterministic(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.WriteFile(f, []byte("binary"), 0o755))
	write := func(order int) []byte {
		l := newLayer()
		if order == 0 {
			l.file("/usr/local/bin/x", f, 0o755)
			l.symlink("/lib", "usr/lib")
			l.content("/etc/passwd", []byte("root\n"), 0o644)
		} else {
			l.content("/etc/passwd", []byte("root\n"), 0o644)
			l.symlink("/lib", "usr/lib")
			l.file("/usr/local/bin/x", f, 0o755)
		}
		var b bytes.Buffer
		require.NoError(t, l.writeTo(&b))
		return b.Bytes()
	}
	a := write(0)
	require.Equal(t, a, write(1))
	tr := tar.NewReader(bytes.NewReader(a))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		require.Zero(t, h.Uid)
		require.Equal(t, epoch.Unix(), h.ModTime.Unix())
	}
	require.Equal(t, []string{"etc/", "etc/passwd", "lib", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/x"}, names)
}

// The mirror comes from the environment first, then the apt sources.
func TestMirrorFromEnvironment(t *testing.T) {
	t.Setenv(EnvMirror, "http://mirror.invalid/debian")
	m, err := mirror()
	require.NoError(t, err)
	require.Equal(t, "http://mirror.invalid/debian", m)
}

// The embedded node files are all in the key, and the entrypoint announces
// cgroup v1 the way kind's create waits for.
func TestNodeFiles(t *testing.T) {
	var names []string
	require.NoError(t, walkFiles(func(name string, _ []byte) error { names = append(names, name); return nil }))
	require.Contains(t, names, "entrypoint")
	require.Contains(t, names, "containerd-config.toml")
	require.Contains(t, string(file("entrypoint")), "detected cgroup v1")
	require.Contains(t, string(file("containerd-config.toml")), "sandbox = '@SANDBOX@'")
	require.Contains(t, string(file("containerd-config.toml")), "BinaryName = ''", "the entrypoint's sed finds the runc binary line")
	if _, err := exec.LookPath("bash"); err == nil {
		for _, s := range []string{"entrypoint", "nvcf-import-images"} {
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = bytes.NewReader(file(s))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: %s", s, out)
		}
	}
}
