package podnet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A rule as `iptables -S` prints it splits back into the arguments that
// delete it, the quoted comment as one.
func TestSplitRule(t *testing.T) {
	args, err := splitRule(`DOCKER-USER -s 198.18.0.0/15 -i nvcfbr+ -m comment --comment "nvcf-harness: pod traffic between its bridges" -j ACCEPT`)
	require.NoError(t, err)
	require.Equal(t, []string{"DOCKER-USER", "-s", "198.18.0.0/15", "-i", "nvcfbr+", "-m", "comment", "--comment", forwardComment, "-j", "ACCEPT"}, args)
	args, err = splitRule(`X --comment "it\'s"`)
	require.NoError(t, err)
	require.Equal(t, []string{"X", "--comment", "it's"}, args)
	_, err = splitRule(`X --comment "open`)
	require.ErrorContains(t, err, "unbalanced quote")
}

// The iptables rule accepts exactly what the nftables forward chain does:
// the test range between our bridges.
func TestForwardRuleMatchesTheTable(t *testing.T) {
	require.Len(t, forwardRules, 1)
	require.Equal(t, []string{"-i", "nvcfbr+", "-o", "nvcfbr+", "-s", "198.18.0.0/15", "-d", "198.18.0.0/15"}, forwardRules[0][:8])
	require.Contains(t, ruleset, `iifname "nvcfbr*" oifname "nvcfbr*" ip saddr 198.18.0.0/15 ip daddr 198.18.0.0/15 accept`)
}
