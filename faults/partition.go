package faults

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/nft"
)

// Side is one cluster's end of a partition: its pod range and the range of
// its load-balancer addresses.
type Side struct {
	Pods netip.Prefix `json:"pods"`
	LBs  netip.Prefix `json:"lbs"`
}

// SideOf is cluster c's side, from the address plan the provider gave
// (c.Network).
func SideOf(c clusters.ClusterInfo) Side {
	return Side{Pods: c.Network.Pods, LBs: c.Network.LoadBalancers}
}

// Partition drops the traffic between two clusters with nftables rules in
// table `inet nvcf_faults`, on the host's input (pod → load balancer, which
// the host delivers locally), output (load balancer → pod replies) and
// forward (pod → pod across bridges) hooks. Flows already open stall; the
// partition heals when the rules go.
type Partition struct {
	A, B Side
	// OneWay cuts only the flows that A opens towards B; B's flows towards
	// A, and their replies, pass.
	OneWay bool
	// Netns is where the rules go ("" = this process's namespace).
	Netns string
}

// PartitionBetween cuts clusters a and b; oneWay cuts only a's flows
// towards b.
func PartitionBetween(a, b clusters.ClusterInfo, oneWay bool) Partition {
	return Partition{A: SideOf(a), B: SideOf(b), OneWay: oneWay}
}

// Kind is KindPartition.
func (Partition) Kind() Kind { return KindPartition }

// Describe names the ranges and direction.
func (p Partition) Describe() string {
	arrow := "<->"
	if p.OneWay {
		arrow = "->"
	}
	return fmt.Sprintf("%s(lb %s) %s %s(lb %s)", p.A.Pods, p.A.LBs, arrow, p.B.Pods, p.B.LBs)
}

// cut returns the rules that stop the flows src opens towards dst.
func cut(src, dst Side) []nft.Rule {
	return []nft.Rule{
		{Chain: nft.Input, Expr: fmt.Sprintf("ip saddr %s ip daddr %s counter drop", src.Pods, dst.LBs)},
		{Chain: nft.Output, Expr: fmt.Sprintf("ip saddr %s ip daddr %s counter drop", dst.LBs, src.Pods)},
		{Chain: nft.Forward, Expr: fmt.Sprintf("ct direction original ip saddr %s ip daddr %s counter drop", src.Pods, dst.Pods)},
		{Chain: nft.Forward, Expr: fmt.Sprintf("ct direction reply ip saddr %s ip daddr %s counter drop", dst.Pods, src.Pods)},
	}
}

func (p Partition) inject(ctx context.Context, e *env) (Undo, error) {
	for _, s := range []Side{p.A, p.B} {
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
