package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/internal/syncbuf"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/reports"
)

// fakeBin builds a bin/ folder with the real test2json and gotestsum and
// testdata/fakesuite as the suite.
func fakeBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range [][]string{
		{"build", "-o", dir + "/", "cmd/test2json", "gotest.tools/gotestsum"},
		{"build", "-o", filepath.Join(dir, SuiteBinary), "./testdata/fakesuite"},
	} {
		out, err := exec.Command("go", b...).CombinedOutput()
		require.NoError(t, err, "go %v: %s", b, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, ReferenceBinary), []byte("#!/bin/sh\n"), 0o755))
	return dir
}

// fakeRun is what a runner test with the fake suite needs: its bin/
// folder and the default topology. It skips the test with -short.
func fakeRun(t *testing.T) (string, *topology.Topology) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds gotestsum, test2json and a fake suite")
	}
	topo, err := topology.Load("../../topologies/default.yaml")
	require.NoError(t, err)
	return fakeBin(t), topo
}

// upProvider hands back an Environment without clusters: the fake suite
// needs none.
type upProvider struct{}

func (upProvider) Up(context.Context, clusters.Spec, ...clusters.UpOption) (*clusters.Environment, error) {
	return &clusters.Environment{Name: "default", Kubeconfig: "/nonexistent"}, nil
}
func (upProvider) Down(context.Context, string) error { return nil }
func (upProvider) Status(context.Context, string) (*clusters.Environment, error) {
	return nil, clusters.ErrNotFound
}

// TestInterruptedRunTotalsThePlan: a run interrupted (SIGINT, as Ctrl-C
// sends it to the whole process group) after its first tests returns
// ErrIncomplete (the CLI exits 2), wrote its plan before the first case,
// and its summary and JUnit say how many planned tests never ran.
func TestInterruptedRunTotalsThePlan(t *testing.T) {
	bin, topo := fakeRun(t)
	art := t.TempDir()
	t.Setenv("FAKESUITE_REPORT", "3")
	t.Setenv("FAKESUITE_BLOCK", "1")
	var out syncbuf.Buffer
	// Interrupt once the fourth test has started, as a user would.
	r := interrupted(t, Options{Topology: topo, Artifacts: art, Provider: upProvider{}, BinDir: bin,
		StateDir: t.TempDir(), Layers: "tls", Workloads: "statefulset", Stdout: &out}, &out, 1)
	require.True(t, errors.Is(r.err, ErrIncomplete), "%v", r.err)
	require.False(t, errors.Is(r.err, ErrFailed), "no verdict: the CLI exits 2")

	plan, err := os.ReadFile(filepath.Join(art, PlanFile))
	require.NoError(t, err)
	planned := strings.Count(string(plan), "\n")
	require.Greater(t, planned, 4)
	total := r.res.Summary.Total
	require.Equal(t, planned, total.Total(), "the summary totals the whole plan")
	require.Equal(t, 3, total.Pass)
	require.Zero(t, total.Fail, "the case in flight at the interrupt is no failure")
	require.Equal(t, 1, total.Error, "the case in flight at the interrupt is an error")
	require.Equal(t, planned-4, total.NotRun)
	want := "interrupted after 4 of " + itoa(planned) + " planned cases; " + itoa(planned-4) + " never ran"
	require.ErrorContains(t, r.err, want)
	md, err := os.ReadFile(filepath.Join(art, "summary.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), want)
	require.Contains(t, out.String(), want)
	junit, err := os.ReadFile(filepath.Join(art, reports.JUnitFile))
	require.NoError(t, err)
	require.Contains(t, string(junit), `<property name="not-run" value="`+itoa(planned-4)+`">`)
	require.Equal(t, planned-4, strings.Count(string(junit), `type="not-run"`))
	require.Contains(t, out.String(), "suite [+", "progress lines reach the terminal")
}

func itoa(n int) string { return strconv.Itoa(n) }

// ran is what Run returned.
type ran struct {
	res *Result
	err error
}

// interrupted runs o and cancels its context, as Ctrl-C does, once that
// many suites have started their fourth test (out is o.Stdout); the run
// must then end.
func interrupted(t *testing.T, o Options, out *syncbuf.Buffer, suites int) ran {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan ran, 1)
	go func() {
		res, err := Run(ctx, o)
		done <- ran{res, err}
	}()
	require.Eventually(t, func() bool { return strings.Count(out.String(), "start 4/") >= suites }, 2*time.Minute, 100*time.Millisecond, out.String())
	cancel()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the run did not end after the interrupt")
		return ran{}
	}
}

// slowSecondProvider brings the first environment up at once and blocks
// every other one's Up until the run is interrupted, as a slow bring-up.
type slowSecondProvider struct{ upProvider }

func (slowSecondProvider) Up(ctx context.Context, spec clusters.Spec, _ ...clusters.UpOption) (*clusters.Environment, error) {
	if spec.Name == "default" {
		return &clusters.Environment{Name: spec.Name, Kubeconfig: "/nonexistent"}, nil
	}
	<-ctx.Done()
	return nil, fmt.Errorf("bring-up of %s: %w", spec.Name, ctx.Err())
}

// TestInterruptedTwoEnvironmentRun: Ctrl-C during a run of two
// environments, once while the second one is still coming up and once
// while both run cases: the run exits incomplete (2), writes every report
// totalling the whole plan, and judges none of the cases it cut short as
// a failure: they are errors with reason interrupted.
func TestInterruptedTwoEnvironmentRun(t *testing.T) {
	bin, topo := fakeRun(t)
	t.Setenv("FAKESUITE_REPORT", "3")
	t.Setenv("FAKESUITE_BLOCK", "1")
	for _, tc := range []struct {
		name     string
		provider clusters.Provider
		inFlight int // suites in the middle of a case when interrupted
	}{
		{"during the second bring-up", slowSecondProvider{}, 1},
		{"during cases", upProvider{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			art := t.TempDir()
			var out syncbuf.Buffer
			r := interrupted(t, Options{Topology: topo, Artifacts: art, Provider: tc.provider, BinDir: bin, Environments: 2,
				StateDir: t.TempDir(), Layers: "tls", Workloads: "statefulset", Stdout: &out}, &out, tc.inFlight)
			require.ErrorIs(t, r.err, ErrIncomplete)
			require.False(t, errors.Is(r.err, ErrFailed), "no verdict: the CLI exits 2")
			for _, f := range []string{PlanFile, reports.JUnitFile, reports.ReportFile, reports.HTMLFile, "summary.md"} {
				require.FileExists(t, filepath.Join(art, f))
			}
			plan, err := os.ReadFile(filepath.Join(art, PlanFile))
			require.NoError(t, err)
			planned := strings.Count(string(plan), "\n")
			total := r.res.Summary.Total
			require.Equal(t, planned, total.Total(), "the summary totals the whole plan")
			require.Zero(t, total.Fail, "no case cut short by the interrupt is a failure")
			require.Equal(t, 3*tc.inFlight, total.Pass)
			require.Equal(t, tc.inFlight, total.Error)
			require.Equal(t, planned-4*tc.inFlight, total.NotRun)
			var cut int
			for _, c := range r.res.Report.Cases {
				if c.Observed == reports.Interrupted {
					cut++
					require.Equal(t, reports.Error, c.Outcome, c.Name)
					require.Contains(t, c.Message, "cut short by the interrupt", c.Name)
				}
			}
			require.Equal(t, tc.inFlight, cut)
			junit, err := os.ReadFile(filepath.Join(art, reports.JUnitFile))
			require.NoError(t, err)
			require.NotContains(t, string(junit), "<failure", "JUnit holds no failure")
		})
	}
}

// TestRerunMarksFlaky: with --reruns 1 a test that failed and then passed
// in a fresh suite process is reported as flaky (never as passed), keeps
// its first attempt's evidence, and does not fail the run.
func TestRerunMarksFlaky(t *testing.T) {
	bin, topo := fakeRun(t)
	art := t.TempDir()
	const flaky = "tls/verified-watch[workload=statefulset,trust=system]"
	t.Setenv("FAKESUITE_REPORT", "1000")
	t.Setenv("FAKESUITE_FAIL", flaky)
	var out syncbuf.Buffer
	res, err := Run(context.Background(), Options{Topology: topo, Artifacts: art, Provider: upProvider{}, BinDir: bin,
		StateDir: t.TempDir(), Layers: "tls", Workloads: "statefulset", Trusts: "system", Reruns: 2, Stdout: &out})
	require.NoError(t, err, out.String())
	require.Equal(t, 1, res.Summary.Total.Flaky)
	require.Zero(t, res.Summary.Total.Fail)
	var c reports.CaseResult
	for _, r := range res.Report.Cases {
		if r.Name == flaky {
			c = r
		}
	}
	require.Equal(t, reports.Flaky, c.Outcome)
	require.Equal(t, 2, c.Attempt)
	require.Len(t, c.Earlier, 1)
	require.Equal(t, reports.Fail, c.Earlier[0].Outcome)
	_, err = os.Stat(filepath.Join(c.Earlier[0].Evidence, reports.ResultFile))
	require.NoError(t, err, "the first attempt's evidence is kept")
	require.Contains(t, c.Earlier[0].Evidence, filepath.Join(art, reports.AttemptsDir, "1"))
	require.Contains(t, c.Repro, "--run '^tls/verified-watch$' --workload statefulset --trust system")
	require.Contains(t, out.String(), "attempt 2: running 1 failed tests again")
	junit, err := os.ReadFile(filepath.Join(art, reports.JUnitFile))
	require.NoError(t, err)
	require.Contains(t, string(junit), `<property name="flaky" value="true">`)
	require.Contains(t, string(junit), "<flakyFailure")
}
