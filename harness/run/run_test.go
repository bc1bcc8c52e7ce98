package run

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// refusingProvider fails every call, to show Run stops before running anything.
type refusingProvider struct{ ups int }

func (p *refusingProvider) Up(context.Context, clusters.Spec, ...clusters.UpOption) (*clusters.Environment, error) {
	p.ups++
	return nil, errors.New("no clusters here")
}
func (p *refusingProvider) Down(context.Context, string) error { return nil }
func (p *refusingProvider) Status(context.Context, string) (*clusters.Environment, error) {
	return nil, clusters.ErrNotFound
}

func TestRunRefusesBadInput(t *testing.T) {
	p := &refusingProvider{}
	_, err := Run(context.Background(), Options{Artifacts: t.TempDir(), Provider: p})
	require.ErrorContains(t, err, "--topology")
	topo, err := topology.Load("../../topologies/default.yaml")
	require.NoError(t, err)
	_, err = Run(context.Background(), Options{Topology: topo, Artifacts: t.TempDir(), Provider: p, Layers: "bogus"})
	require.ErrorContains(t, err, `unknown layer "bogus"`)
	_, err = Run(context.Background(), Options{Topology: topo, Artifacts: t.TempDir(), Provider: p, Run: "^no-such-scenario$"})
	require.ErrorContains(t, err, "select no case")
	_, err = Run(context.Background(), Options{Topology: topo, Artifacts: t.TempDir(), Provider: p, BinDir: t.TempDir()})
	require.ErrorContains(t, err, "lacks scenarios.test, nvcf-ref, test2json, gotestsum; build them with `make build`")
	require.Zero(t, p.ups, "nothing was brought up for a run that selects nothing")
}

// An earlier run's case results and suite log must not be read as this
// run's: the log's cell switches once made harness bench count four runs.
func TestClearCasesDropsTheEarlierRun(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, reports.CasesDir, "tls")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, catalog.SuiteLog)
	if err := os.WriteFile(log, []byte("msg=\"cell deployed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clearCases(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, log} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s survived: %v", p, err)
		}
	}
	if err := clearCases(dir); err != nil {
		t.Errorf("clearing an empty folder: %v", err)
	}
}
