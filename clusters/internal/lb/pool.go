package lb

import (
	"fmt"
	"net/netip"
)

// pool hands out load-balancer addresses from a prefix (.1 to the last
// host), one per Service, sticky for the Service's life. Not safe for
// concurrent use: the controller's single worker owns it.
type pool struct {
	prefix netip.Prefix
	byKey  map[string]netip.Addr
	used   map[netip.Addr]string
}

func newPool(p netip.Prefix) *pool {
	return &pool{prefix: p.Masked(), byKey: map[string]netip.Addr{}, used: map[netip.Addr]string{}}
}

// allocate returns key's address; prefer (e.g. the address already in the
// Service's status after an agent restart) is taken when free and in range.
func (p *pool) allocate(key string, prefer netip.Addr) (netip.Addr, error) {
	if a, ok := p.byKey[key]; ok {
		return a, nil
	}
	take := func(a netip.Addr) netip.Addr {
		p.byKey[key], p.used[a] = a, key
		return a
	}
	if prefer.IsValid() && p.prefix.Contains(prefer) && prefer != p.prefix.Addr() {
		if _, taken := p.used[prefer]; !taken {
			return take(prefer), nil
		}
	}
	for a := p.prefix.Addr().Next(); p.prefix.Contains(a); a = a.Next() {
		if !p.prefix.Contains(a.Next()) {
			break // keep the broadcast address free
		}
		if _, taken := p.used[a]; !taken {
			return take(a), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("load-balancer pool %s is exhausted", p.prefix)
}

// release frees key's address and returns it.
func (p *pool) release(key string) (netip.Addr, bool) {
	a, ok := p.byKey[key]
	if ok {
		delete(p.byKey, key)
		delete(p.used, a)
	}
	return a, ok
}
