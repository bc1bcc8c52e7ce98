package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/topologies"
)

// runManifests is `harness manifests`: print the rendered manifests of a
// topology and a matrix cell, per cluster, for review or for kubectl.
func runManifests(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("manifests", flag.ContinueOnError)
	fs.SetOutput(stderr)
	topo := fs.String("topology", "topologies/default.yaml", "topology file")
	cellName := fs.String("cell", "workload=statefulset,trust=bundle", "matrix cell, e.g. workload=deployment,trust=grpc-override")
	cluster := fs.String("cluster", "", "print only this cluster")
	ns := fs.String("namespace", manifests.Namespace, "namespace of every object")
	images := fs.String("images", "", "comma list of component=image (stargate, router, ingress, pylon, echo, worker-auth-gateway); default "+manifests.DefaultImage)
	flavor := fs.String("flavor", "", flavorUsage)
	binDir := fs.String("nvcf-bin-dir", os.Getenv(nvcfbuild.BinDirEnv), nvcfBinDirUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := topologies.Load(*topo)
	if err != nil {
		return err
	}
	cell, err := matrix.ParseCell(*cellName)
	if err != nil {
		return err
	}
	im, err := parseImages(*images)
	if err != nil {
		return err
	}
	fl, err := manifests.ParseFlavor(*flavor)
	if err != nil {
		return fmt.Errorf("manifests: --flavor: %w", err)
	}
	if *cluster != "" {
		if _, ok := t.Cluster(*cluster); !ok {
			return fmt.Errorf("manifests: --cluster %q is not in topology %q", *cluster, t.Name)
		}
	}
	o := deploy.Options{Topology: t, Cell: cell, Namespace: *ns, Images: im, Flavor: fl}
	if fl == manifests.FlavorNVCF && *binDir != "" {
		b, err := nvcfbuild.FromHelp(context.Background(), *binDir)
		if err != nil {
			return fmt.Errorf("manifests: --nvcf-bin-dir: %w", err)
		}
		o.Build = &b
	}
	out, err := deploy.RenderYAML(o)
	if err != nil {
		return err
	}
	for _, c := range t.Clusters {
		if *cluster != "" && c.Name != *cluster {
			continue
		}
		fmt.Fprintf(stdout, "# ===== cluster %s (%s), cell %s =====\n", c.Name, c.Role, cell.Name())
		if _, err := stdout.Write(out[c.Name]); err != nil {
			return err
		}
	}
	return nil
}

// nvcfBinDirUsage documents --nvcf-bin-dir on run and manifests.
const nvcfBinDirUsage = "folder of real NVCF binaries (stargate, stargate-k8s-router, pylon, stargate-worker-auth-gateway) whose --help says which flags the nvcf flavor may pass; " +
	"what a build lacks (Pylon's gRPC CA override, tunnel client certificates) is then unsupported, and its cases are skipped naming the flag (default $" + nvcfbuild.BinDirEnv + "; empty: the committed list of NVCF " + nvcfbuild.SnapshotCommit + ")"

// flavorUsage documents --flavor on run and manifests.
const flavorUsage = "shape of the containers: reference (the reference roles' own flags) or nvcf (NVCF's flags as its charts render them, so real images run unchanged; see docs/nvcf-compat.md)"

func parseImages(s string) (manifests.Images, error) {
	var im manifests.Images
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return im, fmt.Errorf("--images %q: %q is not component=image", s, kv)
		}
		f := im.Field(k)
		if f == nil {
			return im, fmt.Errorf("--images: component %s unknown; want one of %s", k, strings.Join(manifests.ImageComponents, ", "))
		}
		*f = v
	}
	return im, nil
}
