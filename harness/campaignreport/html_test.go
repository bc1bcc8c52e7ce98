package campaignreport

import (
	"bytes"
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

func TestHTML(t *testing.T) {
	r, o := result(), options()
	data, err := page(r, o)
	require.NoError(t, err)
	s := string(data)
	require.NotContains(t, s, "<script", "the hostile What is escaped, and the page has no script of its own")
	require.Contains(t, s, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.NotContains(t, s, "http://", "self-contained: nothing to fetch")
	require.NotContains(t, s, "https://")

	doc, err := html.Parse(bytes.NewReader(data))
	require.NoError(t, err)
	require.Contains(t, htmltest.Text(one(t, doc, "title")), "seed 42")
	require.Contains(t, htmltest.Text(one(t, doc, "title")), "FAIL")
	require.Contains(t, htmltest.Text(byID(t, doc, "replay")), o.Replay)

	tl := byID(t, doc, "timeline")
	require.Equal(t, "svg", tl.Data)
	require.Len(t, byClass(tl, "scheduled"), 5, "one bar per fault")
	require.Len(t, byClass(tl, "fault"), 5)
	require.Len(t, byClass(tl, "settle"), 1)
	require.Len(t, byClass(tl, "inject-failed"), 1, "fault #3 failed to inject")
	require.Len(t, byClass(tl, "applied"), 4)
	labels := map[string]bool{}
	for _, l := range byClass(tl, "label") {
		labels[htmltest.Text(l)] = true
	}
	require.True(t, labels["#2 quic-loss workers->region-b"], "%v", labels)
	require.True(t, labels["I4-no-leaks (180)"], "%v", labels)
	marks := byClass(tl, "violation")
	require.Len(t, marks, 2, "one marker per violation")
	var titles []string
	for _, m := range marks {
		titles = append(titles, htmltest.Text(m))
	}
	require.Contains(t, titles, "I4-no-leaks violated at 1m40s: "+hostileWhat)
	require.Contains(t, titles, "I1-convergence violated at 2m50s: pylon-2 not held by region-b/stargate-0 55s after the last heal")
	require.NotEmpty(t, byClass(tl, "ok"))
	require.NotEmpty(t, byClass(tl, "bad"))

	require.Len(t, byClass(byID(t, doc, "violations"), "violation-row"), 2)
	require.Contains(t, htmltest.Text(byID(t, doc, "violations")), "#5 dns-spoof workers->region-c")
	require.Contains(t, htmltest.Text(byID(t, doc, "faults")), "pod not found")
	require.Contains(t, htmltest.Text(byID(t, doc, "faults")), "inject failed")
	require.Contains(t, htmltest.Text(byID(t, doc, "faults")), "delay=150ms loss=0.3")
	require.Contains(t, htmltest.Text(byID(t, doc, "scale")), "57.5")
	require.NotContains(t, htmltest.Text(byID(t, doc, "invariants")), "proves nothing", "every invariant was checked")

	require.Contains(t, htmltest.Text(byID(t, doc, "shrunk")), "Shrunk schedule")
	require.Len(t, byClass(byID(t, doc, "shrunk-timeline"), "scheduled"), 1)
	require.Len(t, byClass(byID(t, doc, "trials"), "fail"), 2, "two trials still violated")
	require.Contains(t, s, o.Shrunk.Replay)

	// No scale, no shrink: neither section.
	r.Scale = nil
	data, err = page(r, Options{})
	require.NoError(t, err)
	require.NotContains(t, string(data), `id="scale"`)
	require.NotContains(t, string(data), `id="shrunk"`)
}

// TestHTMLInChromium renders campaign.html in headless Chromium at the
// width the page is made for and keeps the screenshot in _artifacts
// (NVCF_CAMPAIGN_SCREENSHOT overrides).
func TestHTMLInChromium(t *testing.T) {
	browser := htmltest.Chromium(t, "the campaign page")
	dir := t.TempDir()
	require.NoError(t, Write(dir, result(), options()))
	shot := os.Getenv("NVCF_CAMPAIGN_SCREENSHOT")
	if shot == "" {
		var err error
		shot, err = filepath.Abs(filepath.Join("..", "..", "_artifacts", "campaign-screenshot.png"))
		require.NoError(t, err)
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(shot), 0o755))
	_ = os.Remove(shot)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--hide-scrollbars",
		"--screenshot="+shot, "--window-size=1400,1000", "file://"+filepath.Join(dir, HTMLFile))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "chromium: %s", out)
	fi, err := os.Stat(shot)
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(10_000), "a rendered page, not a blank one")
	t.Logf("screenshot: %s", shot)
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := htmltest.FindAll(doc, func(n *html.Node) bool { return htmltest.Attr(n, "id") == id })
	require.Len(t, ns, 1, "element #%s", id)
	return ns[0]
}

func one(t *testing.T, doc *html.Node, tag string) *html.Node {
	t.Helper()
	ns := htmltest.FindAll(doc, func(n *html.Node) bool { return n.Data == tag })
	require.NotEmpty(t, ns, "element <%s>", tag)
	return ns[0]
}

// byClass finds the elements under n whose class list holds class.
func byClass(n *html.Node, class string) []*html.Node {
	return htmltest.FindAll(n, func(n *html.Node) bool { return strings.Contains(" "+htmltest.Attr(n, "class")+" ", " "+class+" ") })
}
