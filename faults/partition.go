package faults

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/nft"
)

// side is one cluster's end of a partition: its pod range and the range of
// its load-balancer addresses.
type side struct {
	Pods netip.Prefix `json:"pods"`
	LBs  netip.Prefix `json:"lbs"`
}

// sideOf is cluster c's side, from the address plan the provider gave
// (c.Network).
func sideOf(c clusters.ClusterInfo) side {
	return side{Pods: c.Network.Pods, LBs: c.Network.LoadBalancers}
}

// partition drops the traffic between two clusters with nftables rules in
// table `inet nvcf_faults`, on the host's input (pod → load balancer, which
// the host delivers locally), output (load balancer → pod replies) and
// forward (pod → pod across bridges) hooks. Flows already open stall; the
// partition heals when the rules go.
type partition struct {
	A, B side
	// OneWay cuts only the flows that A opens towards B; B's flows towards
	// A, and their replies, pass.
	OneWay bool
	// Netns is where the rules go ("" = this process's namespace).
	Netns string
}

// PartitionBetween drops the traffic between clusters a and b (nftables
// rules on the host; flows already open stall until it heals); oneWay cuts
// only the flows a opens towards b.
func PartitionBetween(a, b clusters.ClusterInfo, oneWay bool) Action {
	return partition{A: sideOf(a), B: sideOf(b), OneWay: oneWay}
}

// Kind is kindPartition.
func (partition) Kind() Kind { return kindPartition }

// Describe names the ranges and direction.
func (p partition) Describe() string {
	arrow := "<->"
	if p.OneWay {
		arrow = "->"
	}
	return fmt.Sprintf("%s(lb %s) %s %s(lb %s)", p.A.Pods, p.A.LBs, arrow, p.B.Pods, p.B.LBs)
}

// cut returns the rules that stop the flows src opens towards dst.
func cut(src, dst side) []nft.Rule {
	return []nft.Rule{
		{Chain: nft.Input, Expr: fmt.Sprintf("ip saddr %s ip daddr %s counter drop", src.Pods, dst.LBs)},
		{Chain: nft.Output, Expr: fmt.Sprintf("ip saddr %s ip daddr %s counter drop", dst.LBs, src.Pods)},
		{Chain: nft.Forward, Expr: fmt.Sprintf("ct direction original ip saddr %s ip daddr %s counter drop", src.Pods, dst.Pods)},
		{Chain: nft.Forward, Expr: fmt.Sprintf("ct direction reply ip saddr %s ip daddr %s counter drop", dst.Pods, src.Pods)},
	}
}

func (p partition) inject(ctx context.Context, e *env) (undoFunc, error) {
	for _, s := range []side{p.A, p.B} {
		if !s.Pods.IsValid() || !s.LBs.IsValid() {
			return nil, fmt.Errorf("partition %s: each side needs Pods and LBs (see PartitionBetween)", p.Describe())
		}
	}
	if err := nft.Available(); err != nil {
		return nil, err
	}
	rules := cut(p.A, p.B)
	if !p.OneWay {
		rules = append(rules, cut(p.B, p.A)...)
	}
	if err := e.persist(journal.Cleanup{NFT: &journal.NFT{Netns: p.Netns, Comment: e.comment()}}); err != nil {
		return nil, err
	}
	if err := nft.Add(ctx, p.Netns, e.comment(), rules); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if n, err := nft.Packets(ctx, p.Netns, e.comment()); err == nil {
			e.note("dropped %d packets", n)
		}
		return nft.Delete(ctx, p.Netns, e.comment())
	}, nil
}
