package kind

import (
	"context"
	"io"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/kind/internal/nodeimage"
)

// NodeImage is a node image built here: Ref is its name once loaded into
// Docker, Archive the Docker archive in the cache.
type NodeImage = nodeimage.Image

// ImageOptions say where the node image's inputs are.
type ImageOptions struct {
	// CacheDir is the cache root (default clusters.CacheHome()).
	CacheDir string
	// BinDir holds nvcf-pause and nvcf-runc (make build puts them in bin/).
	BinDir string
	// Progress receives one line per step (nil: discarded).
	Progress io.Writer
}

func (o ImageOptions) internal() nodeimage.Options {
	if o.CacheDir == "" {
		o.CacheDir = clusters.CacheHome()
	}
	return nodeimage.Options{CacheDir: o.CacheDir, Progress: o.Progress,
		Pause: filepath.Join(o.BinDir, "nvcf-pause"), Shim: filepath.Join(o.BinDir, "nvcf-runc")}
}

// BuildNodeImage builds the node image offline (binaries from source, a
// debootstrap'd Debian root, the component images), once: a second call
// with the same inputs finds it in the cache. It needs root and no Docker
// daemon.
func BuildNodeImage(ctx context.Context, o ImageOptions) (*NodeImage, error) {
	return nodeimage.Build(ctx, o.internal())
}

// FindNodeImage returns the cached node image for the current inputs, or
// an error naming the command that builds it.
func FindNodeImage(o ImageOptions) (*NodeImage, error) {
	return nodeimage.Find(o.internal())
}

// Versions are the Kubernetes, etcd and CoreDNS versions the node image is
// built with: the kind provider owns them, as the embedded provider owns
// local.Versions.
func Versions() (kubernetes, etcd, coredns string) {
	v := nodeimage.Pinned()
	return v.Kubernetes, v.Etcd, v.CoreDNS
}
