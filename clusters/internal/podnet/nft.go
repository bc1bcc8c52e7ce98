package podnet

import (
	"context"
	"fmt"
	"strings"
)

// HarnessTable is the provider's nftables table; FaultsTable is the fault
// injector's. Cleanup deletes both.
const (
	HarnessTable = "nvcf_harness"
	FaultsTable  = "nvcf_faults"
)

// ruleset keeps the test range on our bridges. Forwarding: pod traffic may
// cross between our bridges (cluster to cluster) and nowhere else; nothing
// from elsewhere may enter them. Output: the host itself sends the test
// range only to our bridges (and its own harness addresses only to lo), so a
// stale endpoint of a missing cluster cannot leak through the default route.
// Input: each API server listens on its cluster's bridge address, which
// the host would otherwise answer on any interface; only the host itself
// (lo) and the cluster's own pods (its bridge) may reach it, as in a real
// cluster whose API is not published. Everyone else gets a reset.
// The chains' policy is accept: the host's other traffic is not ours to judge.
// The leading "add table; delete table" pair makes the load idempotent in
// one transaction.
var ruleset = fmt.Sprintf(`add table inet nvcf_harness
delete table inet nvcf_harness
table inet nvcf_harness {
	chain input {
		type filter hook input priority filter - 10; policy accept;
		ip daddr 198.18.0.0/15 tcp dport %[1]d-%[2]d iifname "lo" accept
		ip daddr 198.18.0.0/15 tcp dport . iifname { %[3]s } accept
		ip daddr 198.18.0.0/15 tcp dport %[1]d-%[2]d counter reject with tcp reset
	}
	chain forward {
		type filter hook forward priority filter - 10; policy accept;
		iifname "nvcfbr*" oifname "nvcfbr*" ip saddr 198.18.0.0/15 ip daddr 198.18.0.0/15 accept
		iifname "nvcfv*" oifname "nvcfv*" ip saddr 198.18.0.0/15 ip daddr 198.18.0.0/15 accept
		iifname "nvcfbr*" counter drop
		oifname "nvcfbr*" counter drop
		iifname "nvcfv*" counter drop
		oifname "nvcfv*" counter drop
		ip saddr 198.18.0.0/15 counter drop
		ip daddr 198.18.0.0/15 counter drop
		ip daddr 198.19.0.0/16 counter drop
	}
	chain output {
		type filter hook output priority filter - 10; policy accept;
		ip daddr 198.18.0.0/15 oifname != "nvcfbr*" oifname != "lo" counter drop
		ip daddr 198.19.0.0/16 oifname != "lo" oifname != "nvcfbr*" counter drop
	}
}
`, APIServerPort(0), APIServerPort(MaxClusters-1), apiServerBridges())

// apiServerBridges is the nftables set of (API server port, bridge) pairs:
// cluster i's port from cluster i's bridge.
func apiServerBridges() string {
	pairs := make([]string, MaxClusters)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("%d . %q", APIServerPort(i), BridgeName(i))
	}
	return strings.Join(pairs, ", ")
}

// installTable loads the ruleset (idempotent; shared by every cluster).
func installTable(ctx context.Context) error {
	if _, err := run(ctx, ruleset, "nft", "-f", "-"); err != nil {
		return fmt.Errorf("install nftables table inet %s: %w", HarnessTable, err)
	}
	return nil
}
