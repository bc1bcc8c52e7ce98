package scenarios

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

func TestBuildOf(t *testing.T) {
	ctx := context.Background()
	b, err := buildOf(ctx, &catalog.RunConfig{})
	require.NoError(t, err)
	require.True(t, b.IsReference(), "the reference flavor runs the reference roles")
	b, err = buildOf(ctx, &catalog.RunConfig{Flavor: manifests.FlavorNVCF})
	require.NoError(t, err)
	require.Equal(t, nvcfbuild.Snapshot().Name, b.Name)
	_, err = buildOf(ctx, &catalog.RunConfig{Flavor: manifests.FlavorNVCF, NVCFBinDir: t.TempDir()})
	require.ErrorContains(t, err, "no NVCF binary")
}

// A case needing what the build lacks is skipped before anything is
// deployed, "unsupported by this build", naming the flag; under the
// reference build the same case runs.
func TestUnsupportedCasesAreSkippedNamingTheFlag(t *testing.T) {
	w := &World{Config: &catalog.RunConfig{Artifacts: t.TempDir()}, Build: nvcfbuild.Snapshot(), Log: slog.New(slog.DiscardHandler), catalogue: catalog.Catalogue()}
	override := catalog.Case{Scenario: catalog.Scenario{ID: "tls/any", Layer: catalog.LayerTLS, Expect: catalog.Pass}, Cell: matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.GRPCOverride}}
	r := w.newRun(override, catalog.KindCase)
	t.Run("skipped", func(t *testing.T) {
		r.skipUnsupported(t)
		t.Fatal("a grpc-override cell under the snapshot's build must be skipped")
	})
	require.Equal(t, reports.Skip, r.result.Outcome)
	require.Contains(t, r.result.Message, "unsupported by this build")
	require.Contains(t, r.result.Message, "pylon has no --grpc-tls-ca-cert-path (STARGATE_GRPC_TLS_CA_CERT_PATH)")

	bundle := matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.Bundle}
	for _, id := range []string{"quic/missing-client-cert", "quic/untrusted-client-cert"} {
		s, ok := w.scenario(id)
		require.True(t, ok, id)
		require.ErrorContains(t, w.unsupported(catalog.Case{Scenario: s, Cell: bundle}), "pylon has no --quic-client-cert", id)
	}
	s, _ := w.scenario("quic/tunnel-up")
	require.NoError(t, w.unsupported(catalog.Case{Scenario: s, Cell: bundle}))

	w.Build = nvcfbuild.Reference()
	require.NoError(t, w.unsupported(override))
	fixed := nvcfbuild.Snapshot().With(nvcfbuild.Pylon, "grpc-tls-ca-cert-path")
	w.Build = fixed
	require.NoError(t, w.unsupported(override), "a build with the flag runs the cell")
}

// With --real, only the real roles are held to the build's flags: the
// reference Pylon beside a real Stargate has the gRPC CA override, while
// the mutual-TLS profile still needs the real router's flag it lacks.
func TestBuildHoldsOnlyTheRealRoles(t *testing.T) {
	c := &catalog.RunConfig{Flavor: manifests.FlavorNVCF, Real: []string{"stargate", "router"}}
	b, err := buildOf(context.Background(), c)
	require.NoError(t, err)
	require.NoError(t, b.Check(nvcfbuild.GRPCCAOverride), "the reference Pylon plays pylon")
	require.ErrorIs(t, b.Check(nvcfbuild.TunnelClientCert), nvcfbuild.ErrUnsupported, "the real router lacks --quic-client-ca")

	c.Real = []string{"pylon"}
	b, err = buildOf(context.Background(), c)
	require.NoError(t, err)
	require.ErrorIs(t, b.Check(nvcfbuild.GRPCCAOverride), nvcfbuild.ErrUnsupported, "the real Pylon lacks it")
}
