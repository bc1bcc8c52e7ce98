package reports

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/nvcf/conformance/internal/htmltest"
)

// browse loads url in headless Chromium with extra flags and returns stdout.
func browse(t *testing.T, browser, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, browser, append(args, url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	return string(out)
}

// screenshotPath is where the browser test leaves its screenshot: the
// repository's _artifacts folder (NVCF_SCREENSHOT overrides).
func screenshotPath(t *testing.T) string {
	if p := os.Getenv("NVCF_SCREENSHOT"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "_artifacts", "report-screenshot.png"))
	require.NoError(t, err)
	return p
}

// TestHTMLReportInChromium renders the recorded run's report with its gate
// verdict, opens it in headless Chromium, checks the grid and one failure's
// details by DOM queries on the page as the browser left it (scripts run,
// filters applied from the address), and saves a screenshot.
func TestHTMLReportInChromium(t *testing.T) {
	browser := htmltest.Chromium(t, "the HTML report")
	dir, r := recordedRun(t)
	g, err := LoadGate("testdata/recorded/gate.yaml")
	require.NoError(t, err)
	r.Gate = g.Evaluate(r, "gate.yaml", nil, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
	r.Detection = &DetectionMatrix{
		Scenarios: []string{"authority/dashed-ip", "tls/wrong-root"},
		Defects: []DefectRow{{Name: "router-routes-dashed-ip", Role: "router", Epic: 4, Recreates: "dashed-IP authority routed",
			Expected: []string{"authority/dashed-ip"}, Verdict: Caught,
			Cells: map[string]Detection{"authority/dashed-ip": {Ran: true, Red: true, Reasons: []string{"accepted"}}}}},
	}
	require.NoError(t, r.Write(dir))
	page := "file://" + filepath.Join(dir, HTMLFile)
	data, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	require.NotContains(t, string(data), "http://", "self-contained: nothing to fetch")
	require.NotContains(t, string(data), "https://")

	// Unfiltered: the grid colours every case by outcome.
	doc := parseDOM(t, browse(t, browser, page, "--dump-dom"))
	outcomes := map[string]string{}
	for _, td := range htmltest.FindAll(doc, func(n *html.Node) bool { return n.Data == "td" && htmltest.Attr(n, "data-case") != "" }) {
		outcomes[htmltest.Attr(td, "data-case")] = htmltest.Attr(td, "data-outcome")
		require.Contains(t, htmltest.Attr(td, "class"), htmltest.Attr(td, "data-outcome"), "coloured by outcome")
	}
	require.Equal(t, map[string]string{
		"tls/verified-watch" + inCell: "pass", "tls/wrong-root" + inCell: "fail",
		"quic/tunnel-up" + inCell: "flaky", "resilience/quic-loss-delay" + inCell: "error",
	}, outcomes)
	require.Equal(t, "5 cases shown", htmltest.Text(byID(t, doc, "shown")))
	require.Contains(t, htmltest.Text(byID(t, doc, "gate")), "FAIL")
	require.Contains(t, htmltest.Text(byID(t, doc, "meta")), "0123456789abcdef0123456789abcdef01234567")
	require.Contains(t, htmltest.Text(byID(t, doc, "requirements")), "dod-7")
	require.Contains(t, htmltest.Text(byID(t, doc, "detection")), "caught accepted")
	flaky := byID(t, doc, anchor("quic/tunnel-up"+inCell))
	require.Contains(t, htmltest.Text(flaky), "attempt 1: fail")
	marks := htmltest.FindAll(byID(t, doc, "grid"), func(n *html.Node) bool { return htmltest.Attr(n, "class") == "quarantined-mark" })
	require.Len(t, marks, 1, "the grid marks the quarantined case")
	quarantined := byID(t, doc, anchor("resilience/quic-loss-delay"+inCell))
	require.Contains(t, htmltest.Text(quarantined), "owner=resilience-team")
	bars := htmltest.FindAll(quarantined, func(n *html.Node) bool { return strings.Contains(htmltest.Attr(n, "class"), "bar") })
	require.Len(t, bars, 1, "the fault is on the case's timeline")

	// Filtered to failures from the address: only the failing case shows,
	// with its reason, repro command and evidence links.
	doc = parseDOM(t, browse(t, browser, page+"#outcome=fail&layer=tls", "--dump-dom"))
	var shown []string
	for _, d := range htmltest.FindAll(doc, func(n *html.Node) bool { return n.Data == "details" }) {
		if !hasAttr(d, "hidden") {
			shown = append(shown, htmltest.Attr(d, "data-case"))
		}
	}
	require.Equal(t, []string{"tls/wrong-root" + inCell}, shown)
	var rows []string
	for _, tr := range htmltest.FindAll(byID(t, doc, "grid"), func(n *html.Node) bool { return strings.Contains(htmltest.Attr(n, "class"), "grid-row") }) {
		if !hasAttr(tr, "hidden") {
			rows = append(rows, htmltest.Attr(tr, "data-id"))
		}
	}
	require.Equal(t, []string{"tls/wrong-root"}, rows)
	failed := byID(t, doc, anchor("tls/wrong-root"+inCell))
	require.Equal(t, "hostname-mismatch", htmltest.Text(first(t, failed, "reason")))
	require.Contains(t, htmltest.Text(first(t, failed, "repro")), "--run '^tls/wrong-root$' --workload statefulset --trust system --keep")
	var hrefs []string
	for _, a := range htmltest.FindAll(first(t, failed, "evidence"), func(n *html.Node) bool { return n.Data == "a" }) {
		hrefs = append(hrefs, htmltest.Attr(a, "href"))
	}
	require.Contains(t, hrefs, "cases/tls_wrong-root_workload=statefulset,trust=system_/probe-transcript.txt")
	for _, h := range hrefs {
		_, err := os.Stat(filepath.Join(dir, h))
		require.NoError(t, err, "evidence link %s resolves beside the report", h)
	}
	require.Len(t, htmltest.FindAll(failed, func(n *html.Node) bool { return strings.HasPrefix(htmltest.Attr(n, "class"), "step ") }), 3)

	shot := screenshotPath(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(shot), 0o755))
	_ = os.Remove(shot)
	browse(t, browser, page, "--screenshot="+shot, "--window-size=1400,2200", "--hide-scrollbars")
	fi, err := os.Stat(shot)
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(10_000))
	t.Logf("screenshot: %s", shot)
}

func parseDOM(t *testing.T, s string) *html.Node {
	doc, err := html.Parse(strings.NewReader(s))
	require.NoError(t, err)
	return doc
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := htmltest.FindAll(doc, func(n *html.Node) bool { return htmltest.Attr(n, "id") == id })
	require.Len(t, ns, 1, "element #%s", id)
	return ns[0]
}

// first finds the first element under n whose class list holds class.
func first(t *testing.T, n *html.Node, class string) *html.Node {
	t.Helper()
	ns := htmltest.FindAll(n, func(n *html.Node) bool { return strings.Contains(" "+htmltest.Attr(n, "class")+" ", " "+class+" ") })
	require.NotEmpty(t, ns, "element .%s", class)
	return ns[0]
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}
