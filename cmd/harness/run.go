package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/kind"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/deploy/images"
	"github.com/nvcf/conformance/deploy/manifests"
	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/reports"
)

// minArtifactSpace is the free space a run wants for its artifacts: the
// suite log, JUnit, per-case evidence and the clusters' logs on failure.
const minArtifactSpace = 256 << 20

// runRun is `harness run`: bring up (or reuse) the topology, run the
// matrix, write JUnit and the summary, bring the clusters down unless kept.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o, mf, registry := runFlagSet(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %v", fs.Args())
	}
	if err := mf.prepare(o, stdout, stderr); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if *registry != "" {
		if mf.provider.name != providerExisting {
			return fmt.Errorf("run: --registry is for --provider existing; the %s provider runs the reference binary itself", mf.provider.name)
		}
		if err := pushReference(ctx, *registry, &o.Images, stderr); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
	if o.Reruns < 0 {
		return fmt.Errorf("run: --reruns %d: want 0 or more", o.Reruns)
	}
	o.Meta = runMeta(o.Images, mf.imageMap, mf.provider.name)
	_, err := harnessrun.Run(ctx, *o)
	if errors.Is(err, harnessrun.ErrFailed) {
		return err
	}
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// runFlagSet is the flag set of `harness run`, filling the options it
// returns: the shared matrixFlags, --registry and --reruns. A case's
// repro command (harnessrun.Options.Repro) is parsed by it.
func runFlagSet(stderr io.Writer) (fs *flag.FlagSet, o *harnessrun.Options, mf *runFlags, registry *string) {
	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o = &harnessrun.Options{}
	mf = matrixFlags(fs, o)
	registry = fs.String("registry", "", "existing: push the reference image (nvcf-ref beside this executable) to `REGISTRY`/nvcf-ref with go-containerregistry and deploy it by digest, for the components --images leaves unset")
	fs.IntVar(&o.Reruns, "reruns", 0, "run failed cases again up to N times, each in a fresh suite process; one that then passes is reported as flaky")
	return fs, o, mf, registry
}

// embeddedProvider is the embedded provider that `up` and `run` bring
// topologies up with: its process kubelets run the nvcf-ref image from the
// nvcf-ref beside this executable, plus the user's mappings.
func embeddedProvider(extra map[string]string) (clusters.Provider, error) {
	dir, err := harnessrun.BinDir()
	if err != nil {
		return nil, err
	}
	images := map[string]string{"nvcf-ref": filepath.Join(dir, harnessrun.ReferenceBinary)}
	maps.Copy(images, extra)
	return local.New(local.Options{Images: images}), nil
}

// pushReference pushes the reference image to registry and names it, by
// digest, for every component the user left unset.
func pushReference(ctx context.Context, registry string, im *manifests.Images, stderr io.Writer) error {
	dir, err := harnessrun.BinDir()
	if err != nil {
		return err
	}
	ref, err := images.Push(ctx, filepath.Join(dir, harnessrun.ReferenceBinary), registry, version)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "harness: pushed the reference image as %s\n", ref)
	for _, f := range []*string{&im.Stargate, &im.Router, &im.Ingress, &im.Pylon, &im.Echo} {
		if *f == "" {
			*f = ref
		}
	}
	return nil
}

// runMeta is what only the CLI knows of a run: the harness's version and
// commit, the provider, the versions it runs, and every component's image
// with what it resolves to (on the embedded provider, the sha256 of the
// binary the image runs as).
func runMeta(images manifests.Images, binaries imageBinaries, provider string) reports.Meta {
	m := reports.Meta{Version: version, Commit: harnessCommit(), Provider: provider,
		Components: map[string]string{"go": runtime.Version()}}
	if k8s, etcd, coredns, ok := ownedVersions(provider); ok {
		m.Components["kubernetes"], m.Components["etcd"], m.Components["coredns"] = k8s, etcd, coredns
	}
	dir, _ := harnessrun.BinDir()
	for _, c := range []struct{ name, ref string }{{"stargate", images.Stargate}, {"router", images.Router}, {"ingress", images.Ingress}, {"pylon", images.Pylon}, {"echo", images.Echo}} {
		ref := cmp.Or(c.ref, manifests.DefaultImage)
		im := reports.Image{Component: c.name, Ref: ref}
		repo, _, _ := strings.Cut(ref, "@")
		if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
			repo = repo[:i]
		}
		path := binaries[repo]
		if path == "" && ref == manifests.DefaultImage {
			path = filepath.Join(dir, harnessrun.ReferenceBinary)
		}
		if _, digest, ok := strings.Cut(ref, "@"); ok {
			im.Digest = digest
		} else if path != "" {
			im.Digest = fileDigest(path)
		}
		m.Images = append(m.Images, im)
	}
	return m
}

// ownedVersions are the Kubernetes, etcd and CoreDNS versions of a
// provider that builds its clusters here. The existing provider's clusters
// are someone else's, whose versions the harness does not know before it
// connects, so a report records none rather than the embedded provider's.
func ownedVersions(provider string) (k8s, etcd, coredns string, ok bool) {
	switch provider {
	case providerEmbedded:
		k8s, etcd, coredns = local.Versions()
		return k8s, etcd, coredns, true
	case providerKind:
		k8s, etcd, coredns = kind.Versions()
		return k8s, etcd, coredns, true
	}
	return "", "", "", false
}

// fileDigest is "sha256:<hex>" of a file, or "" when it cannot be read.
func fileDigest(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
