package nodeimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Repository is the registry part of every image in the node image; no
// registry answers to it, so nothing is ever pulled. kubeadm names its
// images after it through ClusterConfiguration.imageRepository.
const Repository = "nvcf.local"

// PauseTag is the tag of the pod sandbox image (the nvcf-pause binary).
const PauseTag = "nvcf"

// binPath is where a component's binary sits in its image: on PATH, which
// is where kubeadm's static pod manifests (command "etcd",
// "kube-apiserver", …) and kube-proxy's DaemonSet look.
const binPath = "/usr/local/bin/"

const imagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// iptablesPackages are the Debian packages whose files the kube-proxy
// image carries (it runs iptables-restore and conntrack); their libraries
// come with the shared library layer.
var iptablesPackages = []string{"iptables", "libxtables12", "libip4tc2", "libip6tc2", "libnftnl11", "libmnl0",
	"libnetfilter-conntrack3", "libnfnetlink0", "conntrack"}

// component is one container image of the node.
type component struct {
	name, tag  string
	bin        string   // host path, copied to binPath+name (or entrypoint[0])
	entrypoint []string // nil: kubeadm gives the command
	// withIptables adds the iptables packages' files from the root.
	withIptables bool
}

func (c component) ref() string { return Repository + "/" + c.name + ":" + c.tag }

func (c component) binTarget() string {
	if len(c.entrypoint) > 0 {
		return c.entrypoint[0]
	}
	return binPath + c.name
}

// buildImages writes one OCI archive per component into dir (named
// <name>.tar) and returns their references. root is the node's Debian root,
// where the dynamic binaries' libraries and the iptables files come from.
func buildImages(root, dir string, comps []component) ([]string, error) {
	libs, iptablesFiles, err := sharedLayerFiles(root, comps)
	if err != nil {
		return nil, err
	}
	shared := newLayer()
	for name, src := range libs {
		shared.file(name, filepath.Join(root, src), 0o755)
	}
	shared.symlink("/lib", "usr/lib")
	shared.content("/etc/nsswitch.conf", []byte("hosts: files dns\npasswd: files\ngroup: files\n"), 0o644)
	shared.content("/etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"), 0o644)
	shared.content("/etc/group", []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644)
	shared.dir("/tmp", 0o1777)
	sharedLayer, err := tarLayer(shared)
	if err != nil {
		return nil, err
	}
	var refs []string
	for _, c := range comps {
		own := newLayer()
		own.file(c.binTarget(), c.bin, 0o755)
		if c.withIptables {
			for _, f := range iptablesFiles {
				// Canonical folders: the shared layer's /lib is a symlink
				// (merged /usr) that a folder entry would replace.
				dir, err := resolveIn(root, path.Dir(f))
				if err != nil {
					return nil, err
				}
				f = path.Join(dir, path.Base(f))
				fi, err := os.Lstat(filepath.Join(root, f))
				if err != nil {
					return nil, err
				}
				if fi.Mode()&os.ModeSymlink != 0 {
					t, err := os.Readlink(filepath.Join(root, f))
					if err != nil {
						return nil, err
					}
					own.symlink(f, t)
					continue
				}
				own.file(f, filepath.Join(root, f), int64(fi.Mode().Perm()))
			}
			// The alternatives Debian would set up: the nft flavour, as the
			// node's entrypoint picks unless Docker's rules are legacy.
			for _, t := range []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"} {
				own.symlink("/usr/sbin/"+t, "xtables-nft-multi")
			}
		}
		ownLayer, err := tarLayer(own)
		if err != nil {
			return nil, err
		}
		layers := []v1.Layer{ownLayer}
		if !static(c.bin) || c.withIptables {
			layers = []v1.Layer{sharedLayer, ownLayer}
		}
		img, err := mutate.AppendLayers(empty.Image, layers...)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", "amd64"
		cf.Config.Env = []string{"PATH=" + imagePath}
		cf.Config.Entrypoint = c.entrypoint
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		if err := writeOCIArchive(filepath.Join(dir, c.name+".tar"), c.ref(), c.tag, img); err != nil {
			return nil, fmt.Errorf("image %s: %w", c.ref(), err)
		}
		refs = append(refs, c.ref())
	}
	return refs, nil
}

// sharedLayerFiles returns the libraries every dynamic binary of comps
// needs (image path → path in root) and the iptables packages' files.
func sharedLayerFiles(root string, comps []component) (map[string]string, []string, error) {
	var bins []string
	var withIptables bool
	for _, c := range comps {
		bins = append(bins, c.bin)
		withIptables = withIptables || c.withIptables
	}
	var ipt []string
	if withIptables {
		files, err := dpkgFiles(root, iptablesPackages...)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			if isELF(filepath.Join(root, f)) {
				bins = append(bins, filepath.Join(root, f))
			}
			ipt = append(ipt, f)
		}
	}
	libs, err := sharedLibs(root, bins...)
	return libs, ipt, err
}

// static reports whether the ELF binary at p has no dynamic loader.
func static(p string) bool {
	libs, err := sharedLibs("/nonexistent", p)
	return err == nil && len(libs) == 0
}

func tarLayer(l *layer) (v1.Layer, error) {
	var b bytes.Buffer
	if err := l.writeTo(&b); err != nil {
		return nil, err
	}
	data := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(gzip.BestSpeed))
}

// writeOCIArchive writes img as an OCI image layout in a tar at p, named
// ref for containerd's import (io.containerd.image.name).
func writeOCIArchive(p, ref, tag string, img v1.Image) error {
	tmp, err := os.MkdirTemp(filepath.Dir(p), ".oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return err
	}
	return tarDir(tmp, p)
}

// tarDir writes the files under dir into a tar at p, in path order.
func tarDir(dir, p string) error {
	var files []string
	err := filepath.WalkDir(dir, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if f != dir {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	out, err := os.Create(p + ".partial")
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, f)
		h := &tar.Header{Name: path.Clean(filepath.ToSlash(rel)), Mode: 0o644, ModTime: epoch}
		if fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
		} else {
			h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.IsDir() {
			in, err := os.Open(f)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, in)
			in.Close()
			if err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(p+".partial", p)
}

// WriteBinaryImage writes an OCI archive at p of a one-layer image named
// ref that holds the static binary bin as its entrypoint, /bin/NAME: how
// tests put a program of their own on kind nodes (ctr images import).
func WriteBinaryImage(p, ref, bin string) error {
	if !static(bin) {
		return fmt.Errorf("%s is not a static binary (build it with CGO_ENABLED=0)", bin)
	}
	l := newLayer()
	target := "/bin/" + filepath.Base(bin)
	l.file(target, bin, 0o755)
	la, err := tarLayer(l)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, la)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{target}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	_, tag, _ := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
	return writeOCIArchive(p, ref, tag, img)
}
