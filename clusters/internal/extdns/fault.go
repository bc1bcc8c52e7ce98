package extdns

import (
	"net/netip"
	"slices"
)

// FaultKind is how a faulted name is answered.
type FaultKind string

// The DNS faults the server can apply to a name.
const (
	// NXDomain answers "no such name" even when the name is registered.
	NXDomain FaultKind = "nxdomain"
	// ServFail answers SERVFAIL.
	ServFail FaultKind = "servfail"
	// Spoof answers Fault.Addrs instead of the registered addresses.
	Spoof FaultKind = "spoof"
	// Drop sends no answer at all, so the client times out.
	Drop FaultKind = "drop"
)

// Fault overrides the answers for one name (or, when the name starts with
// "*.", for every name below it) while it is set.
type Fault struct {
	Kind FaultKind
	// Addrs are the spoofed addresses of a Spoof fault.
	Addrs []netip.Addr
}

// SetFault makes host answer according to f until ClearFault. It is the seam
// the fault injector uses; the agent exposes it.
func (s *Server) SetFault(host string, f Fault) {
	f.Addrs = slices.Clone(f.Addrs)
	s.mu.Lock()
	s.faults[canonical(host)] = f
	s.mu.Unlock()
	s.log.Info("external DNS fault set", "name", canonical(host), "kind", f.Kind, "addrs", f.Addrs)
}

// ClearFault removes the fault on host, if any.
func (s *Server) ClearFault(host string) {
	s.mu.Lock()
	delete(s.faults, canonical(host))
	s.mu.Unlock()
	s.log.Info("external DNS fault cleared", "name", canonical(host))
}

// Faults returns a copy of the faults in force, keyed by canonical name.
func (s *Server) Faults() map[string]Fault {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]Fault, len(s.faults))
	for k, v := range s.faults {
		v.Addrs = slices.Clone(v.Addrs)
		out[k] = v
	}
	return out
}

// faultFor finds the fault for name: exact, else the nearest "*." ancestor.
func (s *Server) faultFor(name string) (Fault, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	if f, ok := s.faults[name]; ok {
		return f, true
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '.' && i+1 < len(name) {
			if f, ok := s.faults["*."+name[i+1:]]; ok {
				return f, true
			}
		}
	}
	return Fault{}, false
}
