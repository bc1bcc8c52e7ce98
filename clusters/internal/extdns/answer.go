package extdns

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// handle answers one query: authoritative inside the zones, REFUSED
// outside, never recursive.
func (s *Server) handle(w dns.ResponseWriter, req *dns.Msg) {
	resp, ok := s.answer(req)
	if !ok {
		return // a Drop fault: the client times out
	}
	if err := w.WriteMsg(resp); err != nil {
		s.log.Debug("external DNS write", "err", err)
	}
}

// answer builds the response to req; ok is false when nothing must be sent.
func (s *Server) answer(req *dns.Msg) (resp *dns.Msg, ok bool) {
	resp = new(dns.Msg)
	resp.SetReply(req)
	resp.RecursionAvailable = false
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		resp.Rcode = dns.RcodeNotImplemented
		if req.Opcode == dns.OpcodeQuery {
			resp.Rcode = dns.RcodeFormatError
		}
		return resp, true
	}
	q := req.Question[0]
	name := canonical(q.Name)
	zone := s.zoneOf(name)
	if zone == "" || q.Qclass != dns.ClassINET {
		resp.Rcode = dns.RcodeRefused
		return resp, true
	}
	resp.Authoritative = true

	addrs, found := s.lookup(name)
	if f, hit := s.faultFor(name); hit {
		switch f.Kind {
		case Drop:
			return nil, false
		case NXDomain:
			addrs, found = nil, false
		case ServFail:
			resp.Authoritative = false
			resp.Rcode = dns.RcodeServerFailure
			return resp, true
		case Spoof:
			addrs, found = f.Addrs, true
		}
	}

	switch {
	case name == zone && (q.Qtype == dns.TypeSOA || q.Qtype == dns.TypeNS):
		if q.Qtype == dns.TypeSOA {
			resp.Answer = append(resp.Answer, soa(zone))
		} else {
			resp.Answer = append(resp.Answer, &dns.NS{Hdr: hdr(zone, dns.TypeNS), Ns: "ns." + zone})
		}
		return resp, true
	case !found && name != zone && !s.hasChildren(name):
		resp.Rcode = dns.RcodeNameError
	}
	for _, a := range addrs {
		switch {
		case a.Is4() && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeANY):
			resp.Answer = append(resp.Answer, &dns.A{Hdr: hdr(q.Name, dns.TypeA), A: a.AsSlice()})
		case a.Is6() && (q.Qtype == dns.TypeAAAA || q.Qtype == dns.TypeANY):
			resp.Answer = append(resp.Answer, &dns.AAAA{Hdr: hdr(q.Name, dns.TypeAAAA), AAAA: a.AsSlice()})
		}
	}
	if len(resp.Answer) == 0 {
		resp.Ns = append(resp.Ns, soa(zone)) // NXDOMAIN or NODATA: negative caching hint
	}
	return resp, true
}

// lookup finds name's addresses, falling back to a wildcard "*.<parent>"
// registered for any ancestor inside the zone.
func (s *Server) lookup(name string) ([]netip.Addr, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if a, ok := s.records[name]; ok {
		return a, true
	}
	for parent := name; ; {
		i := strings.IndexByte(parent, '.')
		if i < 0 || i == len(parent)-1 {
			return nil, false
		}
		parent = parent[i+1:]
		if a, ok := s.records["*."+parent]; ok {
			return a, true
		}
	}
}

// hasChildren reports whether a registered name lies below name (an empty
// non-terminal answers NODATA, not NXDOMAIN).
func (s *Server) hasChildren(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for n := range s.records {
		if n != name && dns.IsSubDomain(name, n) {
			return true
		}
	}
	return false
}

func hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: TTL}
}

func soa(zone string) *dns.SOA {
	return &dns.SOA{Hdr: hdr(zone, dns.TypeSOA), Ns: "ns." + zone, Mbox: "hostmaster." + zone,
		Serial: 1, Refresh: 60, Retry: 10, Expire: 600, Minttl: TTL}
}
