package podnet

import (
	"context"
	"fmt"
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
// The chains' policy is accept: the host's other traffic is not ours to judge.
// The leading "add table; delete table" pair makes the load idempotent in
// one transaction.
const ruleset = `add table inet nvcf_harness
delete table inet nvcf_harness
table inet nvcf_harness {
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
`

// installTable loads the ruleset (idempotent; shared by every cluster).
func installTable(ctx context.Context) error {
	if _, err := run(ctx, ruleset, "nft", "-f", "-"); err != nil {
		return fmt.Errorf("install nftables table inet %s: %w", HarnessTable, err)
	}
	return nil
}
