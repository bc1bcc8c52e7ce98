package podnet

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// ipam hands out pod addresses from one /24 (.2 to .254; .1 is the
// gateway), persisted to a JSON file after every change so that a restarted
// agent never gives a live address to a second pod. Allocation is
// round-robin from the last address handed out, as the CNI host-local plugin
// does, so a replaced pod rarely inherits its predecessor's address while
// stale endpoints may still name it.
type ipam struct {
	mu     sync.Mutex
	path   string
	prefix netip.Prefix
	state  ipamState
}

type ipamState struct {
	Prefix string            `json:"prefix"`
	Last   string            `json:"last,omitempty"`
	Allocs map[string]string `json:"allocs"` // key (netns name) → address
}

// loadIPAM reads path (a missing file is an empty pool) for prefix.
func loadIPAM(path string, prefix netip.Prefix) (*ipam, error) {
	if !prefix.Addr().Is4() || prefix.Bits() != 24 {
		return nil, fmt.Errorf("IPAM prefix %s: want an IPv4 /24", prefix)
	}
	m := &ipam{path: path, prefix: prefix, state: ipamState{Prefix: prefix.String(), Allocs: map[string]string{}}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("read IPAM state %s: %w", path, err)
	}
	var st ipamState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("IPAM state %s is corrupt (%w); delete it once no pod of this cluster runs", path, err)
	}
	if st.Prefix != prefix.String() {
		return nil, fmt.Errorf("IPAM state %s is for %s, not %s: the topology's cluster order changed; run `harness down` first", path, st.Prefix, prefix)
	}
	if st.Allocs == nil {
		st.Allocs = map[string]string{}
	}
	m.state = st
	return m, nil
}

// Allocate returns key's address, allocating one if key has none.
func (m *ipam) Allocate(key string) (netip.Addr, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.state.Allocs[key]; ok {
		return netip.ParseAddr(s)
	}
	used := make(map[string]bool, len(m.state.Allocs))
	for _, a := range m.state.Allocs {
		used[a] = true
	}
	start := 1 // so the first address tried is .2
	if last, err := netip.ParseAddr(m.state.Last); err == nil && m.prefix.Contains(last) {
		start = int(last.As4()[3])
	}
	base := m.prefix.Addr().As4()
	for n := 1; n <= 253; n++ {
		host := (start-2+n)%253 + 2 // cycles .2 … .254
		base[3] = byte(host)
		a := netip.AddrFrom4(base)
		if used[a.String()] {
			continue
		}
		m.state.Allocs[key] = a.String()
		m.state.Last = a.String()
		if err := m.save(); err != nil {
			delete(m.state.Allocs, key)
			return netip.Addr{}, err
		}
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("pod range %s is full (253 pods): delete pods or use another cluster", m.prefix)
}

// Release frees key's address; releasing an unknown key is a no-op.
func (m *ipam) Release(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.state.Allocs[key]; !ok {
		return nil
	}
	delete(m.state.Allocs, key)
	return m.save()
}

// Prune frees every allocation whose key keep rejects (e.g. whose netns no
// longer exists after a crash) and returns the freed keys.
func (m *ipam) Prune(keep func(key string) bool) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var freed []string
	for k := range m.state.Allocs {
		if !keep(k) {
			delete(m.state.Allocs, k)
			freed = append(freed, k)
		}
	}
	if len(freed) == 0 {
		return nil, nil
	}
	return freed, m.save()
}

// Allocations returns a copy of the current key → address map.
func (m *ipam) Allocations() map[string]netip.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]netip.Addr, len(m.state.Allocs))
	for k, v := range m.state.Allocs {
		out[k], _ = netip.ParseAddr(v)
	}
	return out
}

// save writes the state atomically.
func (m *ipam) save() error {
	b, err := json.MarshalIndent(m.state, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return fmt.Errorf("IPAM state dir: %w", err)
	}
	if err := atomicfile.Write(m.path, b, 0o644); err != nil {
		return fmt.Errorf("write IPAM state: %w", err)
	}
	return nil
}
