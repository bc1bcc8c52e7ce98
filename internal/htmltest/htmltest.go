// Package htmltest holds what the tests of the HTML reports share: finding
// the headless browser and walking a parsed page. Only tests import it.
package htmltest

import (
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Chromium finds Debian's headless browser (hack/deps.sh installs it), or
// skips the test, saying that what was not checked in a browser.
func Chromium(t *testing.T, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed, so " + what + " is not checked in a browser: install Debian's chromium (hack/deps.sh does) to run this test")
	return ""
}

// FindAll lists the elements under n that match, in document order.
func FindAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
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

// Attr is the value of n's attribute name ("" when it has none).
func Attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// Text is the text under n, trimmed.
func Text(n *html.Node) string {
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
