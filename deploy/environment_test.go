package deploy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
)

// TestApplyOnEnvironment deploys cells on clusters that are up (e.g.
// `harness up --topology T`), when NVCF_DEPLOY_KUBECONFIG names their
// kubeconfig (contexts named like the clusters) and NVCF_DEPLOY_TOPOLOGY
// the topology file (default topologies/default.yaml). It measures a first
// Apply, a trust switch, a workload switch, an idempotent re-apply, a
// fail-closed Pylon variant, a scale and a pod deletion:
//
//	NVCF_DEPLOY_KUBECONFIG=~/.local/state/nvcf-harness/default/kubeconfig go test ./deploy -run TestApplyOnEnvironment -v
func TestApplyOnEnvironment(t *testing.T) {
	kubeconfig := os.Getenv("NVCF_DEPLOY_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("set NVCF_DEPLOY_KUBECONFIG to the kubeconfig of running clusters")
	}
	topoPath := os.Getenv("NVCF_DEPLOY_TOPOLOGY")
	if topoPath == "" {
		topoPath = filepath.Join("..", "topologies", "default.yaml")
	}
	topo, err := topology.Load(topoPath)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	m, err := pki.Mint(ctx, pkitopo.Request(topo, 0, false), filepath.Join(t.TempDir(), "pki"))
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := New(Options{Kubeconfig: kubeconfig, Topology: topo, PKI: m, ClientTLS: true, Logger: log,
		Cell: matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.Bundle}})
	require.NoError(t, err)

	step := func(name string, f func() error) {
		start := time.Now()
		require.NoError(t, f(), name)
		t.Logf("%-34s %s", name, time.Since(start).Round(10*time.Millisecond))
	}
	var res *Result
	step("apply statefulset/bundle", func() (err error) { res, err = d.Apply(ctx); return })
	a, _ := res.Cluster("region-a")
	require.Equal(t, "StatefulSet", a.StargateKind)
	require.Equal(t, []string{"stargate-0", "stargate-1", "stargate-2"}, a.StargatePods)
	for _, lb := range a.LoadBalancers {
		require.NotEmpty(t, lb.Addresses, lb.Service)
	}
	step("re-apply (idempotent)", func() (err error) { _, err = d.Apply(ctx); return })
	step("switch trust to grpc-override", func() (err error) {
		_, err = d.Switch(ctx, matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.GRPCOverride})
		return
	})
	step("switch workload to deployment", func() (err error) {
		res, err = d.Switch(ctx, matrix.Cell{Workload: matrix.Deployment, Trust: matrix.GRPCOverride})
		return
	})
	b, _ := res.Cluster("region-b")
	require.Equal(t, "Deployment", b.StargateKind)
	require.Len(t, b.StargatePods, 3)
	step("switch workload to mixed", func() (err error) {
		res, err = d.Switch(ctx, matrix.Cell{Workload: matrix.Mixed, Trust: matrix.GRPCOverride})
		return
	})
	a, _ = res.Cluster("region-a")
	require.Equal(t, "StatefulSet", a.StargateKind)
	step("fail-closed pylon variant up", func() error {
		v, err := d.ApplyPylonVariant(ctx, "malformed", PylonOverrides{CustomTrustConfigMap: pki.ConfigMapName(pki.BundleMalformed)})
		if err == nil {
			require.NotEmpty(t, v.Pods)
		}
		return err
	})
	step("pylon variant deleted", func() error { return d.DeletePylonVariant(ctx, "malformed") })
	step("scale region-b to 2", func() error { return d.Scale(ctx, "region-b", 2) })
	step("delete pod stargate-1 (region-a)", func() error { return d.DeletePod(ctx, "region-a", "stargate-1") })
	step("wait for its replacement", func() error { return d.WaitStargates(ctx, "region-a") })
	step("apply restores replicas", func() (err error) { res, err = d.Apply(ctx); return })
	b, _ = res.Cluster("region-b")
	require.Len(t, b.StargatePods, 3)
}
