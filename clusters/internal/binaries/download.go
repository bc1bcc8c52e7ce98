package binaries

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Sources are the base URLs the pinned release artifacts are downloaded
// from. Each artifact sits at <base>/<version>/<file>, beside its published
// SHA-256, as upstream lays its releases out; a mirror must keep that layout.
type Sources struct {
	// Kubernetes serves <base>/v1.37.2/bin/linux/<arch>/<binary> and
	// <binary>.sha256 (env NVCF_BINARIES_KUBERNETES_URL).
	Kubernetes string
	// Etcd serves <base>/v3.6.16/etcd-v3.6.16-linux-<arch>.tar.gz and
	// <base>/v3.6.16/SHA256SUMS (env NVCF_BINARIES_ETCD_URL).
	Etcd string
	// CoreDNS serves <base>/v1.14.7/coredns_1.14.7_linux_<arch>.tgz and
	// the same name with .sha256 (env NVCF_BINARIES_COREDNS_URL).
	CoreDNS string
}

// DefaultSources are upstream's release locations.
var DefaultSources = Sources{
	Kubernetes: "https://dl.k8s.io",
	Etcd:       "https://github.com/etcd-io/etcd/releases/download",
	CoreDNS:    "https://github.com/coredns/coredns/releases/download",
}

// Environment variables that override Options.Sources and Options.NoDownload.
const (
	EnvKubernetesURL = "NVCF_BINARIES_KUBERNETES_URL"
	EnvEtcdURL       = "NVCF_BINARIES_ETCD_URL"
	EnvCoreDNSURL    = "NVCF_BINARIES_COREDNS_URL"
	// EnvDownload set to "off" (or "0", "false") always builds from source.
	EnvDownload = "NVCF_BINARIES_DOWNLOAD"
)

// ErrChecksum is wrapped when a downloaded artifact's SHA-256 differs from
// the published one. Nothing is installed then, and nothing is built: a
// mirror serving other bytes is something to look at, not to paper over.
var ErrChecksum = errors.New("checksum mismatch")

// unavailable says an artifact could not be fetched (host unreachable, slow
// to answer, HTTP error, transfer stalled): the caller builds from source.
type unavailable struct {
	url string
	err error
}

func (u *unavailable) Error() string { return u.url + ": " + u.err.Error() }
func (u *unavailable) Unwrap() error { return u.err }

const (
	defaultConnectTimeout = 5 * time.Second
	defaultHeaderTimeout  = 20 * time.Second
	defaultStallTimeout   = 30 * time.Second
	maxSumFile            = 1 << 20
	maxBinary             = 1 << 30
)

func (s *Sources) defaults() {
	for _, f := range []struct {
		field    *string
		env, def string
	}{
		{&s.Kubernetes, EnvKubernetesURL, DefaultSources.Kubernetes},
		{&s.Etcd, EnvEtcdURL, DefaultSources.Etcd},
		{&s.CoreDNS, EnvCoreDNSURL, DefaultSources.CoreDNS},
	} {
		if *f.field == "" {
			*f.field = os.Getenv(f.env)
		}
		if *f.field == "" {
			*f.field = f.def
		}
		*f.field = strings.TrimRight(*f.field, "/")
	}
}

func downloadsOff() bool {
	switch strings.ToLower(os.Getenv(EnvDownload)) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// downloader fetches artifacts with short connect timeouts and no retries,
// and remembers hosts that did not answer so that the next component
// falls back at once instead of waiting again.
type downloader struct {
	client   *http.Client
	stall    time.Duration
	progress io.Writer

	mu   sync.Mutex
	dead map[string]error // host → why it did not answer
}

func newDownloader(o Options) *downloader {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: o.connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = o.connectTimeout
	tr.ResponseHeaderTimeout = o.headerTimeout
	return &downloader{client: &http.Client{Transport: tr}, stall: o.stallTimeout, progress: o.Progress, dead: map[string]error{}}
}

// get starts a GET of u. Any failure, including a status other than 200,
// is *unavailable; a host that could not be reached is remembered.
func (d *downloader) get(ctx context.Context, u string) (*http.Response, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, &unavailable{u, err}
	}
	d.mu.Lock()
	why := d.dead[pu.Host]
	d.mu.Unlock()
	if why != nil {
		return nil, &unavailable{u, fmt.Errorf("not tried, %s did not answer a moment ago: %w", pu.Host, why)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &unavailable{u, err}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // the URL is said once, by unavailable
		}
		if ctx.Err() == nil {
			d.mu.Lock()
			d.dead[pu.Host] = err
			d.mu.Unlock()
		}
		return nil, &unavailable{u, err}
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &unavailable{u, fmt.Errorf("HTTP %s", resp.Status)}
	}
	return resp, nil
}

// publishedSum fetches a checksum file and returns the SHA-256 it gives
// for name: the file holds either one bare sum or "<sum>  <name>" lines.
func (d *downloader) publishedSum(ctx context.Context, sumURL, name string) (string, error) {
	resp, err := d.get(ctx, sumURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSumFile))
	if err != nil {
		return "", &unavailable{sumURL, err}
	}
	sum, err := parseSum(string(data), name)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrBuild, sumURL, err)
	}
	return sum, nil
}

func parseSum(data, name string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && validSum(f[0]):
			return strings.ToLower(f[0]), nil
		case len(f) == 2 && validSum(f[0]) && path.Base(strings.TrimPrefix(f[1], "*")) == name:
			return strings.ToLower(f[0]), nil
		}
	}
	return "", fmt.Errorf("no SHA-256 for %s in the checksum file", name)
}

func validSum(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// fetchVerified downloads u into a temporary file in dir, checks its
// SHA-256 against want and returns the file's path (the caller renames or
// removes it). On a mismatch the file is removed and the error wraps
// ErrChecksum, naming the artifact and both sums.
func (d *downloader) fetchVerified(ctx context.Context, u, dir, want string) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, err := d.get(ctx, u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBuild, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// A transfer that makes no progress for d.stall is abandoned.
	errStalled := fmt.Errorf("transfer stalled for %s", d.stall)
	watchdog := time.AfterFunc(d.stall, func() { cancel(errStalled) })
	defer watchdog.Stop()
	h := sha256.New()
	body := &progressReader{r: io.LimitReader(resp.Body, maxBinary), tick: func() { watchdog.Reset(d.stall) }}
	if _, err := io.Copy(io.MultiWriter(tmp, h), body); err != nil {
		if c := context.Cause(ctx); c != nil {
			err = c
		}
		return "", &unavailable{u, err}
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != want {
		return "", fmt.Errorf("%w: %s (%s): published sha256 %s, downloaded file has %s; nothing was installed (set %s=off to build from source instead)",
			ErrChecksum, path.Base(u), u, want, got, EnvDownload)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBuild, err)
	}
	ok = true
	return tmp.Name(), nil
}

type progressReader struct {
	r    io.Reader
	tick func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.tick()
	}
	return n, err
}

// installBinary downloads a plain binary verified against its published
// sum and renames it into place, executable.
func (d *downloader) installBinary(ctx context.Context, u, sumURL, dst string) error {
	want, err := d.publishedSum(ctx, sumURL, path.Base(u))
	if err != nil {
		return err
	}
	tmp, err := d.fetchVerified(ctx, u, filepath.Dir(dst), want)
	if err != nil {
		return err
	}
	return install(tmp, dst)
}

// installFromArchive downloads a .tar.gz verified against its published
// sum, then extracts member (a path inside the archive) to dst.
func (d *downloader) installFromArchive(ctx context.Context, u, sumURL, member, dst string) error {
	want, err := d.publishedSum(ctx, sumURL, path.Base(u))
	if err != nil {
		return err
	}
	archive, err := d.fetchVerified(ctx, u, filepath.Dir(dst), want)
	if err != nil {
		return err
	}
	defer os.Remove(archive)
	tmp, err := extract(archive, member, filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBuild, path.Base(u), err)
	}
	return install(tmp, dst)
}

func install(tmp, dst string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", ErrBuild, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", ErrBuild, err)
	}
	return nil
}

// extract copies the regular file member of a gzipped tar into a
// temporary file in dir and returns its path.
func extract(archive, member, dir string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("no %s in the archive", member)
		}
		if err != nil {
			return "", err
		}
		if path.Clean(hdr.Name) != member || hdr.Typeflag != tar.TypeReg {
			continue
		}
		out, err := os.CreateTemp(dir, ".extract-*")
		if err != nil {
			return "", err
		}
		_, err = io.Copy(out, io.LimitReader(tr, maxBinary))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(out.Name())
			return "", err
		}
		return out.Name(), nil
	}
}

// arch is the release artifacts' name for this machine's architecture
// (amd64, arm64, …: all three projects use Go's names).
func arch() string { return runtime.GOARCH }

func downloadKubernetes(ctx context.Context, d *downloader, o Options, c component) (string, error) {
	base := fmt.Sprintf("%s/%s/bin/linux/%s/", o.Sources.Kubernetes, o.Versions.Kubernetes, arch())
	for _, b := range c.bins {
		u := base + filepath.Base(b)
		if err := d.installBinary(ctx, u, u+".sha256", b); err != nil {
			return "", err
		}
	}
	return base, nil
}

func downloadEtcd(ctx context.Context, d *downloader, o Options, c component) (string, error) {
	v := o.Versions.Etcd
	name := fmt.Sprintf("etcd-%s-linux-%s", v, arch())
	base := fmt.Sprintf("%s/%s/", o.Sources.Etcd, v)
	u := base + name + ".tar.gz"
	return u, d.installFromArchive(ctx, u, base+"SHA256SUMS", name+"/etcd", c.bins[0])
}

func downloadCoreDNS(ctx context.Context, d *downloader, o Options, c component) (string, error) {
	v := o.Versions.CoreDNS
	u := fmt.Sprintf("%s/%s/coredns_%s_linux_%s.tgz", o.Sources.CoreDNS, v, strings.TrimPrefix(v, "v"), arch())
	return u, d.installFromArchive(ctx, u, u+".sha256", "coredns", c.bins[0])
}
