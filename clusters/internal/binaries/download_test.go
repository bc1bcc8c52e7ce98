package binaries

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func tgz(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "README.md", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg}))
	_, _ = tw.Write([]byte("hi"))
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}))
	_, _ = tw.Write(body)
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// release is a fake of the three upstream release layouts: path → body.
type release struct {
	files    map[string][]byte
	requests atomic.Int32
}

func newRelease(t *testing.T) *release {
	a := arch()
	r := &release{files: map[string][]byte{}}
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"} {
		body := []byte("#!fake " + b)
		p := fmt.Sprintf("/k8s/v1.37.2/bin/linux/%s/%s", a, b)
		r.files[p] = body
		r.files[p+".sha256"] = []byte(sum(body)) // Kubernetes publishes the bare sum
	}
	etcdName := "etcd-v3.6.16-linux-" + a
	etcdTar := tgz(t, etcdName+"/etcd", []byte("#!fake etcd"))
	r.files["/etcd/v3.6.16/"+etcdName+".tar.gz"] = etcdTar
	r.files["/etcd/v3.6.16/SHA256SUMS"] = []byte(fmt.Sprintf("%s  etcd-v3.6.16-darwin-%s.zip\n%s  %s.tar.gz\n",
		strings.Repeat("ab", 32), a, sum(etcdTar), etcdName))
	cdName := "coredns_1.14.7_linux_" + a + ".tgz"
	cdTar := tgz(t, "coredns", []byte("#!fake coredns"))
	r.files["/coredns/v1.14.7/"+cdName] = cdTar
	r.files["/coredns/v1.14.7/"+cdName+".sha256"] = []byte(sum(cdTar) + "  " + cdName + "\n")
	return r
}

func (r *release) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.requests.Add(1)
	b, ok := r.files[req.URL.Path]
	if !ok {
		http.NotFound(w, req)
		return
	}
	_, _ = w.Write(b)
}

func sourcesAt(base string) Sources {
	return Sources{Kubernetes: base + "/k8s", Etcd: base + "/etcd/", CoreDNS: base + "/coredns"}
}

func noBuild(t *testing.T) func(context.Context, Options, component) error {
	return func(_ context.Context, _ Options, c component) error {
		t.Errorf("built %s from source; want the download", c.name)
		return errors.New("no build in this test")
	}
}

func TestEnsureDownloadsVerifiedReleases(t *testing.T) {
	t.Setenv(EnvDownload, "")
	rel := newRelease(t)
	srv := httptest.NewServer(rel)
	defer srv.Close()
	var progress bytes.Buffer
	o := Options{CacheDir: t.TempDir(), Progress: &progress, Sources: sourcesAt(srv.URL), build: noBuild(t)}
	o.defaults()

	set, err := Ensure(t.Context(), o)
	require.NoError(t, err)
	require.NoFileExists(t, KubectlPath(o), "kubectl only when asked for")
	kubectl, err := EnsureKubectl(t.Context(), o)
	require.NoError(t, err)
	require.Equal(t, KubectlPath(o), kubectl)
	for _, b := range []string{set.APIServer, set.ControllerManager, set.Scheduler, set.Etcd, set.CoreDNS, kubectl} {
		fi, err := os.Stat(b)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), b)
		data, _ := os.ReadFile(b)
		require.Equal(t, "#!fake "+filepath.Base(b), string(data))
	}
	require.Equal(t, Paths(o), *set, "downloads and builds share the cache layout")
	out := progress.String()
	require.Contains(t, out, "downloaded kube-apiserver, kube-controller-manager and kube-scheduler v1.37.2 from "+srv.URL+"/k8s/v1.37.2/bin/linux/")
	require.Contains(t, out, "downloaded kubectl v1.37.2 from "+srv.URL+"/k8s/v1.37.2/bin/linux/")
	require.Contains(t, out, "downloaded etcd v3.6.16 from "+srv.URL+"/etcd/v3.6.16/etcd-v3.6.16-linux-")
	require.Contains(t, out, "downloaded coredns v1.14.7")
	require.NotContains(t, out, "building")

	var st stamp
	data, err := os.ReadFile(filepath.Join(etcdDir(o), "stamp.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &st))
	require.Equal(t, "go.etcd.io/etcd/server/v3", st.Module)
	require.Equal(t, "v3.6.16", st.Version)
	require.True(t, strings.HasPrefix(st.Source, srv.URL+"/etcd/"), st.Source)

	// No temporary file stays behind.
	for _, dir := range []string{k8sDir(o), kubectlDir(o), etcdDir(o), corednsDir(o)} {
		left, _ := filepath.Glob(filepath.Join(dir, "bin", ".*"))
		require.Empty(t, left)
	}

	// Warm: nothing is fetched again.
	n := rel.requests.Load()
	_, err = Ensure(t.Context(), o)
	require.NoError(t, err)
	_, err = EnsureKubectl(t.Context(), o)
	require.NoError(t, err)
	require.Equal(t, n, rel.requests.Load())
}

func TestChecksumMismatchInstallsNothing(t *testing.T) {
	t.Setenv(EnvDownload, "")
	a := arch()
	for _, tc := range []struct {
		name, artifact, sumPath, bin string
		dir                          func(Options) string
	}{
		{"kubernetes", "kube-scheduler", "/k8s/v1.37.2/bin/linux/" + a + "/kube-scheduler.sha256", "kube-scheduler", k8sDir},
		{"etcd", "etcd-v3.6.16-linux-" + a + ".tar.gz", "/etcd/v3.6.16/SHA256SUMS", "etcd", etcdDir},
		{"coredns", "coredns_1.14.7_linux_" + a + ".tgz", "/coredns/v1.14.7/coredns_1.14.7_linux_" + a + ".tgz.sha256", "coredns", corednsDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := newRelease(t)
			bad := strings.Repeat("0", 64)
			rel.files[tc.sumPath] = []byte(bad + "  " + tc.artifact + "\n")
			srv := httptest.NewServer(rel)
			defer srv.Close()
			o := Options{CacheDir: t.TempDir(), Sources: sourcesAt(srv.URL), build: noBuild(t)}
			o.defaults()

			_, err := Ensure(t.Context(), o)
			require.ErrorIs(t, err, ErrChecksum)
			msg := err.Error()
			require.Contains(t, msg, tc.artifact)
			require.Contains(t, msg, "published sha256 "+bad)
			require.Regexp(t, "downloaded file has [0-9a-f]{64}", msg)

			_, err = os.Stat(filepath.Join(tc.dir(o), "bin", tc.bin))
			require.ErrorIs(t, err, os.ErrNotExist, "a file that failed its checksum is never installed")
			_, err = os.Stat(filepath.Join(tc.dir(o), "stamp.json"))
			require.ErrorIs(t, err, os.ErrNotExist)
			left, _ := filepath.Glob(filepath.Join(tc.dir(o), "bin", ".*"))
			require.Empty(t, left, "temporary files are removed")
		})
	}
}

var errFakeBuild = errors.New("fake build")

// fallback runs every component against o and returns what the fake
// builder was asked to build and the progress lines.
func fallback(t *testing.T, o Options) ([]string, string) {
	t.Helper()
	var progress bytes.Buffer
	var mu sync.Mutex
	var built []string
	o.Progress = &progress
	o.build = func(_ context.Context, _ Options, c component) error {
		mu.Lock()
		built = append(built, c.name)
		mu.Unlock()
		return errFakeBuild
	}
	o.defaults()
	d := newDownloader(o)
	for _, c := range components(o) {
		require.ErrorIs(t, ensureComponent(t.Context(), o, d, c), errFakeBuild)
	}
	return built, progress.String()
}

func TestUnreachableFallsBackToBuildAtOnce(t *testing.T) {
	t.Setenv(EnvDownload, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused

	start := time.Now()
	built, out := fallback(t, Options{CacheDir: t.TempDir(), Sources: sourcesAt("http://" + addr)})
	took := time.Since(start)
	t.Logf("fallback of three components from a refused host: %s", took)
	require.Len(t, built, 3)
	require.Less(t, took, 2*time.Second)
	require.Equal(t, 3, strings.Count(out, "building from source instead"), out)
	require.Contains(t, out, "cannot download kube-apiserver")
	require.Contains(t, out, "did not answer a moment ago", "a dead host is tried once, not once per component")
}

func TestSilentHostFallsBackAfterTimeout(t *testing.T) {
	t.Setenv(EnvDownload, "")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	start := time.Now()
	built, out := fallback(t, Options{CacheDir: t.TempDir(), Sources: sourcesAt(srv.URL), headerTimeout: 300 * time.Millisecond})
	took := time.Since(start)
	t.Logf("fallback of three components from a host that never answers (300 ms header timeout): %s", took)
	require.Len(t, built, 3)
	require.Less(t, took, 3*time.Second, "one timeout, then the host is skipped")
	require.Contains(t, out, "building from source instead")
}

func TestStalledTransferFallsBack(t *testing.T) {
	t.Setenv(EnvDownload, "")
	rel := newRelease(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/kube-apiserver") {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte("#!partial"))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		rel.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(release)
	o := Options{CacheDir: t.TempDir(), Sources: sourcesAt(srv.URL), stallTimeout: 300 * time.Millisecond}
	var progress bytes.Buffer
	o.Progress = &progress
	o.build = func(context.Context, Options, component) error { return errFakeBuild }
	o.defaults()
	c := components(o)[0]
	require.ErrorIs(t, ensureComponent(t.Context(), o, newDownloader(o), c), errFakeBuild)
	require.Contains(t, progress.String(), "transfer stalled")
	left, _ := filepath.Glob(filepath.Join(c.dir, "bin", "*"))
	left2, _ := filepath.Glob(filepath.Join(c.dir, "bin", ".*"))
	require.Empty(t, append(left, left2...))
}

func TestMissingReleaseFallsBack(t *testing.T) {
	t.Setenv(EnvDownload, "")
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	built, out := fallback(t, Options{CacheDir: t.TempDir(), Sources: sourcesAt(srv.URL)})
	require.Len(t, built, 3)
	require.Contains(t, out, "404")
}

func TestDownloadsOff(t *testing.T) {
	rel := newRelease(t)
	srv := httptest.NewServer(rel)
	defer srv.Close()
	t.Setenv(EnvDownload, "off")
	built, out := fallback(t, Options{CacheDir: t.TempDir(), Sources: sourcesAt(srv.URL)})
	require.Len(t, built, 3)
	require.Zero(t, rel.requests.Load())
	require.NotContains(t, out, "download")
}

func TestSourcesFromEnvironment(t *testing.T) {
	t.Setenv(EnvKubernetesURL, "http://mirror.test/k8s/")
	t.Setenv(EnvEtcdURL, "")
	var s Sources
	s.defaults()
	require.Equal(t, "http://mirror.test/k8s", s.Kubernetes)
	require.Equal(t, DefaultSources.Etcd, s.Etcd)
	s = Sources{Kubernetes: "http://option.test"}
	s.defaults()
	require.Equal(t, "http://option.test", s.Kubernetes, "the option wins over the environment")
}

func TestParseSum(t *testing.T) {
	h := strings.Repeat("aB", 32)
	for _, tc := range []struct{ data, name, want string }{
		{h + "\n", "kube-apiserver", strings.ToLower(h)},
		{strings.Repeat("11", 32) + "  other.tgz\n" + h + " *etcd.tar.gz\n", "etcd.tar.gz", strings.ToLower(h)},
		{h + "  ./dist/coredns.tgz", "coredns.tgz", strings.ToLower(h)},
	} {
		got, err := parseSum(tc.data, tc.name)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	_, err := parseSum(h+"  other.tgz\n", "etcd.tar.gz")
	require.Error(t, err)
	_, err = parseSum("not-a-sum\n", "x")
	require.Error(t, err)
}
