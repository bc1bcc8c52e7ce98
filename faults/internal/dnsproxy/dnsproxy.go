// Package dnsproxy is a small DNS server that answers one faulted name as
// told (NXDOMAIN, SERVFAIL or a spoofed address) and forwards every other
// query to the real server, over the transport it came on.
package dnsproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Mode is how the faulted name is answered.
type Mode string

const (
	// NXDomain answers that the name does not exist.
	NXDomain Mode = "nxdomain"
	// ServFail answers that the server failed.
	ServFail Mode = "servfail"
	// Spoof answers A queries with a chosen address (and AAAA with nothing).
	Spoof Mode = "spoof"
)

// Config configures a Server.
type Config struct {
	// Name is the faulted name (any case, with or without the final dot).
	Name string
	Mode Mode
	// Addr is the spoofed IPv4 address (Mode Spoof).
	Addr netip.Addr
	// TTL of spoofed answers (default 5 s).
	TTL uint32
	// Upstream is the real server that gets every other query.
	Upstream netip.AddrPort
	// Dial connects to Upstream (default net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// UDP and TCP are the sockets to serve on (either may be nil); the
	// server closes them.
	UDP net.PacketConn
	TCP net.Listener
	// Logger receives debug logs (nil: discarded).
	Logger *slog.Logger
}

// Server is a running fault DNS server.
type Server struct {
	cfg     Config
	name    string
	servers []*dns.Server
	wg      sync.WaitGroup
	log     *slog.Logger

	faulted, forwarded atomic.Uint64
}

// Faulted is how many queries for the faulted name were answered wrongly.
func (s *Server) Faulted() uint64 { return s.faulted.Load() }

// Forwarded is how many other queries were forwarded to the real server.
func (s *Server) Forwarded() uint64 { return s.forwarded.Load() }

// Start serves cfg.
func Start(cfg Config) (*Server, error) {
	switch cfg.Mode {
	case NXDomain, ServFail:
	case Spoof:
		if !cfg.Addr.Is4() {
			return nil, fmt.Errorf("dns spoof of %q: want an IPv4 address, got %v", cfg.Name, cfg.Addr)
		}
	default:
		return nil, fmt.Errorf("dns fault mode %q: want nxdomain, servfail or spoof", cfg.Mode)
	}
	if cfg.Name == "" || !cfg.Upstream.IsValid() {
		return nil, errors.New("dns fault: Name and Upstream are required")
	}
	if cfg.UDP == nil && cfg.TCP == nil {
		return nil, errors.New("dns fault: no socket to serve on (set UDP and/or TCP)")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 5
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, name: dns.Fqdn(strings.ToLower(cfg.Name)), log: log}
	if cfg.UDP != nil {
		s.serve(&dns.Server{PacketConn: cfg.UDP, Handler: s.handler("udp")})
	}
	if cfg.TCP != nil {
		s.serve(&dns.Server{Listener: cfg.TCP, Handler: s.handler("tcp")})
	}
	return s, nil
}

func (s *Server) serve(srv *dns.Server) {
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	s.servers = append(s.servers, srv)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.ActivateAndServe(); err != nil {
			s.log.Debug("dns fault server ended", "err", err)
		}
	}()
	<-started
}

func (s *Server) handler(network string) dns.HandlerFunc {
	return func(w dns.ResponseWriter, req *dns.Msg) {
		if len(req.Question) == 1 && strings.ToLower(req.Question[0].Name) == s.name {
			s.faulted.Add(1)
			_ = w.WriteMsg(s.fault(req))
			return
		}
		s.forwarded.Add(1)
		resp, err := s.forward(network, req)
		if err != nil {
			s.log.Debug("dns fault forward", "err", err)
			m := new(dns.Msg)
			m.SetRcode(req, dns.RcodeServerFailure)
			resp = m
		}
		_ = w.WriteMsg(resp)
	}
}

func (s *Server) fault(req *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	switch s.cfg.Mode {
	case NXDomain:
		m.SetRcode(req, dns.RcodeNameError)
		m.Authoritative = true
	case ServFail:
		m.SetRcode(req, dns.RcodeServerFailure)
	case Spoof:
		m.SetReply(req)
		m.Authoritative = true
		q := req.Question[0]
		if q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: s.cfg.TTL},
				A:   s.cfg.Addr.AsSlice(),
			})
		}
	}
	return m
}

func (s *Server) forward(network string, req *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := s.cfg.Dial(ctx, network, s.cfg.Upstream.String())
	if err != nil {
		return nil, fmt.Errorf("dial %s %s: %w", network, s.cfg.Upstream, err)
	}
	defer c.Close()
	cl := &dns.Client{Net: network, Timeout: 5 * time.Second, UDPSize: dns.MaxMsgSize}
	resp, _, err := cl.ExchangeWithConnContext(ctx, req, &dns.Conn{Conn: c, UDPSize: dns.MaxMsgSize})
	return resp, err
}

// Close stops serving and closes the sockets.
func (s *Server) Close() error {
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Shutdown(); err != nil {
			errs = append(errs, err)
		}
	}
	s.wg.Wait()
	return errors.Join(errs...)
}
