package scenarios

import (
	"context"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// buildOf is what the components under test accept (fixtures/nvcfbuild): in
// the reference flavor, the reference build (everything); in the nvcf
// flavor, the --help of the binaries in NVCFBinDir when the run names
// them, else the committed snapshot's list, for the roles --real names
// (all of them without --real). A case that needs a feature
// the build lacks is reported as skipped, "unsupported by this build",
// with the missing flag, and never runs (World.unsupported).
func buildOf(ctx context.Context, c *catalog.RunConfig) (nvcfbuild.Build, error) {
	if c.Flavor != manifests.FlavorNVCF {
		return nvcfbuild.Reference(), nil
	}
	b := nvcfbuild.Snapshot()
	if c.NVCFBinDir != "" {
		var err error
		if b, err = nvcfbuild.FromHelp(ctx, c.NVCFBinDir); err != nil {
			return b, err
		}
	}
	if len(c.Real) == 0 {
		return b, nil // the nvcf flavor on images the user names: all of them real
	}
	// --real names the real roles; the reference components play the
	// others and lack nothing.
	var ref []string
	for _, r := range nvcfbuild.Roles {
		if !c.IsReal(r) {
			ref = append(ref, r)
		}
	}
	return b.PlayedByReference(ref...), nil
}

// cellFeatures are what a cell needs of the build: the trust
// grpc-override cells, Pylon's gRPC CA override (manifests.Values.Features
// says the same of the rendered values).
func cellFeatures(c matrix.Cell) []nvcfbuild.Feature {
	if c.Normalize().Trust == matrix.GRPCOverride {
		return []nvcfbuild.Feature{nvcfbuild.GRPCCAOverride}
	}
	return nil
}

// unsupported returns why the build cannot run case c (its cell's, its
// scenario's or its positive control's features), else nil.
func (w *World) unsupported(c catalog.Case) error {
	need := append(cellFeatures(c.Cell), c.Scenario.Requires.Features...)
	if ctl, ok := w.scenario(c.Scenario.Control); ok && c.Scenario.Control != "" {
		need = append(need, ctl.Requires.Features...)
	}
	return w.Build.Check(need...)
}
