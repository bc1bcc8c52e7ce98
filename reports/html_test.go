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
)

// chromium finds Debian's headless browser (hack/deps.sh installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed, so the HTML report is not checked in a browser: install Debian's chromium (hack/deps.sh does) to run this test")
	return ""
}

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
	browser := chromium(t)
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
	for _, td := range findAll(doc, func(n *html.Node) bool { return n.Data == "td" && attrOf(n, "data-case") != "" }) {
		outcomes[attrOf(td, "data-case")] = attrOf(td, "data-outcome")
		require.Contains(t, attrOf(td, "class"), attrOf(td, "data-outcome"), "coloured by outcome")
	}
	require.Equal(t, map[string]string{
		"tls/verified-watch" + inCell: "pass", "tls/wrong-root" + inCell: "fail",
		"quic/tunnel-up" + inCell: "flaky", "resilience/quic-loss-delay" + inCell: "error",
	}, outcomes)
	require.Equal(t, "5 cases shown", text(byID(t, doc, "shown")))
	require.Contains(t, text(byID(t, doc, "gate")), "FAIL")
	require.Contains(t, text(byID(t, doc, "meta")), "0123456789abcdef0123456789abcdef01234567")
	require.Contains(t, text(byID(t, doc, "requirements")), "dod-7")
	require.Contains(t, text(byID(t, doc, "detection")), "caught accepted")
	flaky := byID(t, doc, anchor("quic/tunnel-up"+inCell))
	require.Contains(t, text(flaky), "attempt 1: fail")
	marks := findAll(byID(t, doc, "grid"), func(n *html.Node) bool { return attrOf(n, "class") == "quarantined-mark" })
	require.Len(t, marks, 1, "the grid marks the quarantined case")
	quarantined := byID(t, doc, anchor("resilience/quic-loss-delay"+inCell))
	require.Contains(t, text(quarantined), "owner=resilience-team")
	bars := findAll(quarantined, func(n *html.Node) bool { return strings.Contains(attrOf(n, "class"), "bar") })
	require.Len(t, bars, 1, "the fault is on the case's timeline")

	// Filtered to failures from the address: only the failing case shows,
	// with its reason, repro command and evidence links.
	doc = parseDOM(t, browse(t, browser, page+"#outcome=fail&layer=tls", "--dump-dom"))
	var shown []string
	for _, d := range findAll(doc, func(n *html.Node) bool { return n.Data == "details" }) {
		if !hasAttr(d, "hidden") {
			shown = append(shown, attrOf(d, "data-case"))
		}
	}
	require.Equal(t, []string{"tls/wrong-root" + inCell}, shown)
	var rows []string
	for _, tr := range findAll(byID(t, doc, "grid"), func(n *html.Node) bool { return strings.Contains(attrOf(n, "class"), "grid-row") }) {
		if !hasAttr(tr, "hidden") {
			rows = append(rows, attrOf(tr, "data-id"))
		}
	}
	require.Equal(t, []string{"tls/wrong-root"}, rows)
	failed := byID(t, doc, anchor("tls/wrong-root"+inCell))
	require.Equal(t, "hostname-mismatch", text(first(t, failed, "reason")))
	require.Contains(t, text(first(t, failed, "repro")), "--run '^tls/wrong-root$' --workload statefulset --trust system --keep")
	var hrefs []string
	for _, a := range findAll(first(t, failed, "evidence"), func(n *html.Node) bool { return n.Data == "a" }) {
		hrefs = append(hrefs, attrOf(a, "href"))
	}
	require.Contains(t, hrefs, "cases/tls_wrong-root_workload=statefulset,trust=system_/probe-transcript.txt")
	for _, h := range hrefs {
		_, err := os.Stat(filepath.Join(dir, h))
		require.NoError(t, err, "evidence link %s resolves beside the report", h)
	}
	require.Len(t, findAll(failed, func(n *html.Node) bool { return strings.HasPrefix(attrOf(n, "class"), "step ") }), 3)

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

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := findAll(doc, func(n *html.Node) bool { return attrOf(n, "id") == id })
	require.Len(t, ns, 1, "element #%s", id)
	return ns[0]
}

// first finds the first element under n whose class list holds class.
func first(t *testing.T, n *html.Node, class string) *html.Node {
	t.Helper()
	ns := findAll(n, func(n *html.Node) bool { return strings.Contains(" "+attrOf(n, "class")+" ", " "+class+" ") })
	require.NotEmpty(t, ns, "element .%s", class)
	return ns[0]
}

func attrOf(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}
