package extdns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// TTL is the time-to-live of every answer, short so that a re-registered
// load balancer is seen quickly.
const TTL = 5

// Server is the authoritative external DNS. Its methods are safe for
// concurrent use; the zero value is not usable, call New.
type Server struct {
	log   *slog.Logger
	zones []string // canonical, lower case, with trailing dot

	mu      sync.RWMutex
	records map[string][]netip.Addr // canonical name → addresses
	faults  map[string]Fault

	srvMu   sync.Mutex
	servers []*dns.Server
}

// New returns a server authoritative for zones (e.g. "nvcf.test"). It
// serves nothing until Start.
func New(log *slog.Logger, zones ...string) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{log: log, records: map[string][]netip.Addr{}, faults: map[string]Fault{}}
	for _, z := range zones {
		s.zones = append(s.zones, canonical(z))
	}
	return s
}

// canonical lower-cases name and makes it fully qualified.
func canonical(name string) string { return dns.Fqdn(strings.ToLower(strings.TrimSpace(name))) }

// Set makes host answer with addrs (A records for IPv4, AAAA for IPv6),
// replacing what it answered before. Set with no addresses is Remove.
func (s *Server) Set(host string, addrs ...netip.Addr) {
	if len(addrs) == 0 {
		s.Remove(host)
		return
	}
	name := canonical(host)
	if s.zoneOf(name) == "" {
		s.log.Warn("external DNS: name outside the served zones will be refused", "name", name, "zones", s.zones)
	}
	cp := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		cp[i] = a.Unmap()
	}
	s.mu.Lock()
	s.records[name] = cp
	s.mu.Unlock()
	s.log.Debug("external DNS set", "name", name, "addrs", cp)
}

// Remove forgets host; it then answers NXDOMAIN.
func (s *Server) Remove(host string) {
	s.mu.Lock()
	delete(s.records, canonical(host))
	s.mu.Unlock()
}

// Records returns a copy of every registered name and its addresses.
func (s *Server) Records() map[string][]netip.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string][]netip.Addr, len(s.records))
	for k, v := range s.records {
		out[k] = slices.Clone(v)
	}
	return out
}

// Start binds addr over UDP and TCP and serves in the background until ctx
// is done or Close is called. It returns once both sockets are bound.
func (s *Server) Start(ctx context.Context, addr netip.AddrPort) error {
	pc, err := net.ListenPacket("udp", addr.String())
	if err != nil {
		return fmt.Errorf("external DNS: listen udp %s: %w (is another DNS server bound there? 127.0.0.88 is reserved for the harness)", addr, err)
	}
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		pc.Close()
		return fmt.Errorf("external DNS: listen tcp %s: %w", addr, err)
	}
	return s.serve(ctx, pc, ln)
}

func (s *Server) serve(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
	udp := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.handle)}
	tcp := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(s.handle)}
	s.srvMu.Lock()
	s.servers = append(s.servers, udp, tcp)
	s.srvMu.Unlock()
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		guard.Go("extdns: serve", func() {
			if err := srv.ActivateAndServe(); err != nil {
				s.log.Warn("external DNS stopped", "err", err)
			}
		})
		<-started
	}
	s.log.Info("external DNS serving", "addr", pc.LocalAddr().String(), "zones", s.zones)
	guard.Go("extdns: close on cancel", func() {
		<-ctx.Done()
		_ = s.Close()
	})
	return nil
}

// Close stops serving. It is safe to call more than once.
func (s *Server) Close() error {
	s.srvMu.Lock()
	servers := s.servers
	s.servers = nil
	s.srvMu.Unlock()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.Shutdown())
	}
	return errors.Join(errs...)
}

// zoneOf returns the served zone that contains name, or "".
func (s *Server) zoneOf(name string) string {
	best := ""
	for _, z := range s.zones {
		if dns.IsSubDomain(z, name) && len(z) > len(best) {
			best = z
		}
	}
	return best
}
