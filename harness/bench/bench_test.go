package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/reports"
)

func TestSummarizeChargesEachClusterItsProcessesAndAShareOfTheAgent(t *testing.T) {
	const mi = 1 << 20
	m := summarize([]local.ProcessMemory{
		{Component: "agent", PID: 1, RSS: 90 * mi, PSS: 60 * mi},
		{Cluster: "a", Component: "etcd", RSS: 40 * mi, PSS: 30 * mi},
		{Cluster: "a", Component: "kube-apiserver", RSS: 200 * mi, PSS: 150 * mi},
		{Cluster: "b", Component: "etcd", RSS: 41 * mi, PSS: 31 * mi},
		{Component: "pod", RSS: 10 * mi}, // not a cluster's control plane
	}, 3)
	require.Equal(t, int64(30*mi), m.AgentShare)
	require.Len(t, m.Clusters, 2)
	require.Equal(t, "a", m.Clusters[0].Name)
	require.Equal(t, int64(270*mi), m.Clusters[0].RSS)
	require.Equal(t, int64(200*mi), m.Clusters[0].PSS)
	require.Equal(t, int64(71*mi), m.Clusters[1].RSS)
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(d)
	require.Equal(t, 50*time.Millisecond, p.P50)
	require.Equal(t, 99*time.Millisecond, p.P99)
	require.Equal(t, 50500*time.Microsecond, p.Mean)
	l := &Latency{Tunnel: Percentiles{P50: 3 * time.Millisecond, P99: 8 * time.Millisecond}, Direct: Percentiles{P50: 2 * time.Millisecond, P99: 4 * time.Millisecond}}
	require.InDelta(t, 1.5, l.Ratio50(), 1e-9)
	require.InDelta(t, 2.0, l.Ratio99(), 1e-9)
}

func TestCPUIsInterpolatedBetweenSamples(t *testing.T) {
	t0 := time.Now()
	s := []cpuSample{{t0, 0}, {t0.Add(time.Second), time.Second}, {t0.Add(2 * time.Second), 1500 * time.Millisecond}}
	require.Equal(t, 500*time.Millisecond, cpuBetween(s, t0.Add(500*time.Millisecond), t0.Add(time.Second)))
	require.Equal(t, 1500*time.Millisecond, cpuBetween(s, t0.Add(-time.Second), t0.Add(time.Hour)))
}

func TestTreeCPUCountsThisProcess(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) { // burn some CPU so the clock ticks
	}
	require.Positive(t, treeCPU([]int{os.Getpid()}))
}

func TestProfileGroupsCasesAndCellSwitches(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Minute)
	for i, c := range []reports.CaseResult{
		{Name: "tls/a[c1]", Layer: "tls", Cell: "c1", Start: t0, Duration: 10 * time.Second},
		{Name: "tls/b[c2]", Layer: "tls", Cell: "c2", Start: t0.Add(10 * time.Second), Duration: 5 * time.Second},
		{Name: "watch/a[c2]", Layer: "watch", Cell: "c2", Start: t0.Add(15 * time.Second), Duration: 20 * time.Second},
		// Ran beside watch/a: in the case time, not again in the wall time.
		{Name: "watch/b[c2]", Layer: "watch", Cell: "c2", Start: t0.Add(20 * time.Second), Duration: 10 * time.Second},
	} {
		c.Evidence = filepath.Join(dir, reports.CasesDir, string(rune('a'+i)))
		c.Outcome = reports.Pass
		require.NoError(t, reports.WriteCase(c))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "suite.log"), []byte(
		`time=x level=INFO msg="cell deployed" cell="c1" took=7.5s`+"\n"+`time=x level=INFO msg="cell deployed" cell="c2" took=2s`+"\n"), 0o644))
	samples := []cpuSample{{t0, 0}, {t0.Add(35 * time.Second), 35 * time.Second}}
	cases, err := reports.LoadCases(dir)
	require.NoError(t, err)
	p := profile(cases, []string{filepath.Join(dir, "suite.log")}, 40*time.Second, samples)
	require.Equal(t, 35*time.Second, p.Cases)
	require.Equal(t, 45*time.Second, p.CaseTime)
	require.Equal(t, 9500*time.Millisecond, p.Deploy)
	require.Equal(t, 2, p.Deploys)
	require.Equal(t, "watch", p.ByLayer[0].Name)
	require.Equal(t, 20*time.Second, p.ByLayer[0].Wall)
	require.Equal(t, 30*time.Second, p.ByLayer[0].CaseTime)
	require.Equal(t, 2, p.ByLayer[0].Cases)
	require.Equal(t, 25*time.Second, p.ByCell[0].Wall, "c2 ran from 10 s to 35 s")
	require.Equal(t, 15*time.Second, p.ByLayer[1].CPU)
	require.Equal(t, "c2", p.ByCell[0].Name)
	require.Equal(t, 2*time.Second, p.ByCell[0].Deploy)
	require.True(t, strings.Contains(p.Markdown(), "| watch | 2 | 20.0 | 30.0 | 20.0 | 1.00 |"), p.Markdown())
}

func TestTunnelVsRealNeedsTheBinaries(t *testing.T) {
	_, err := RunTunnelVsReal(t.Context(), TunnelVsRealOptions{Artifacts: t.TempDir()})
	require.ErrorContains(t, err, "NVCF_REAL_BIN_DIR")
	_, err = RunTunnelVsReal(t.Context(), TunnelVsRealOptions{BinDir: t.TempDir(), Artifacts: t.TempDir()})
	require.ErrorContains(t, err, "has no stargate")
}

func TestTunnelVsRealReport(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	r := &TunnelVsReal{Requests: 500, Warmup: 50, Machine: "linux/amd64, 2 CPUs", BinDir: "/nv",
		Reference: Percentiles{P50: ms(0.5), P99: ms(1), Mean: ms(0.6)}, Real: Percentiles{P50: ms(2), P99: ms(4), Mean: ms(2.5)},
		Direct: Percentiles{P50: ms(0.25), P99: ms(0.5), Mean: ms(0.3)}, ReferenceURL: "http://a", RealURL: "http://b", EchoURL: "http://c"}
	md := r.Markdown()
	require.Contains(t, md, "| reference tunnel (http://a) | 0.50 | 1.00 | 0.60 | 2.00× |")
	require.Contains(t, md, "| real tunnel (http://b) | 2.00 | 4.00 | 2.50 | 8.00× |")
	require.Contains(t, md, "| direct to echo (http://c) | 0.25 | 0.50 | 0.30 | 1.00× |")
	require.Contains(t, md, "reference / real: p50 0.25×, p99 0.25×, mean 0.24×.")
}
