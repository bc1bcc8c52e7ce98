package faults

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/nft"
	"golang.org/x/sys/unix"
)

func (p Path) validate() error {
	if !p.From.IsValid() || !p.Gateway.IsValid() || !p.To.IsValid() {
		return fmt.Errorf("path %+v: From, Gateway and To are required (see PathBetween)", p)
	}
	if !p.From.Addr().Is4() || !p.Gateway.Is4() || !p.To.Addr().Is4() {
		return fmt.Errorf("path %s → %s: IPv4 only", p.From, p.To)
	}
	return nil
}

// String renders the path as "from → to (via gateway)".
func (p Path) String() string { return fmt.Sprintf("%s → %s (via %s)", p.From, p.To, p.Gateway) }

// redirect installs the DNAT rule that sends path's traffic of proto
// ("tcp" or "udp") to the proxy at listen, and returns its undo.
func redirect(ctx context.Context, e *env, p Path, proto string, listen netip.AddrPort) (undoFunc, error) {
	if err := nft.Available(); err != nil {
		return nil, err
	}
	if err := e.persist(journal.Cleanup{NFT: &journal.NFT{Netns: p.Netns, Comment: e.comment()}}); err != nil {
		return nil, err
	}
	// Once the flush below clears a live flow, the load balancer's next
	// packet to the pod would open a conntrack entry of its own, and the
	// pod's packets would then match it as replies, skipping the DNAT for
	// the rest of the fault. So the load balancer may not open flows
	// towards the path's pods; its replies through the proxy are
	// established, not new.
	rules := []nft.Rule{
		{Chain: nft.Prerouting, Expr: fmt.Sprintf("ip saddr %s ip daddr %s %s dport %d dnat ip to %s", p.From, p.To.Addr(), proto, p.To.Port(), listen)},
		{Chain: nft.Output, Expr: fmt.Sprintf("ip saddr %s ip daddr %s %s sport %d ct state new drop", p.To.Addr(), p.From, proto, p.To.Port())},
	}
	if err := nft.Add(ctx, p.Netns, e.comment(), rules); err != nil {
		return nil, err
	}
	flush := func() error {
		if p.KeepFlows {
			return nil
		}
		pr := uint8(unix.IPPROTO_TCP)
		if proto == "udp" {
			pr = unix.IPPROTO_UDP
		}
		_, err := nft.FlushFlows(p.Netns, pr, p.From, p.To)
		return err
	}
	if err := flush(); err != nil {
		e.log.Warn("flush conntrack at fault start", "path", p.String(), "err", err)
	}
	return func(ctx context.Context) error {
		err := nft.Delete(ctx, p.Netns, e.comment())
		if ferr := flush(); ferr != nil {
			e.log.Warn("flush conntrack at fault end", "path", p.String(), "err", ferr)
		}
		return err
	}, nil
}

// chain runs undos in reverse order and joins their errors.
func chain(undos ...undoFunc) undoFunc {
	return func(ctx context.Context) error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			if undos[i] != nil {
				errs = append(errs, undos[i](ctx))
			}
		}
		return errors.Join(errs...)
	}
}
