package podnet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Cluster i's API server port is admitted from lo and from cluster i's
// bridge only; the rest of the port range is reset.
func TestRulesetConfinesAPIServers(t *testing.T) {
	require.Contains(t, ruleset, `tcp dport 6443-6532 iifname "lo" accept`)
	require.Contains(t, ruleset, `6443 . "nvcfbr0", 6444 . "nvcfbr1"`)
	require.Contains(t, ruleset, `6532 . "nvcfbr89" }`)
	require.Contains(t, ruleset, `tcp dport 6443-6532 counter reject with tcp reset`)
}
