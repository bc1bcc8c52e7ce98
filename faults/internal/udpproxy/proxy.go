// Package udpproxy is a userspace UDP proxy with per-client sessions and
// per-direction impairments (loss with bursts, delay and jitter,
// duplication, reordering, corruption, blackhole schedules) and rebinding
// of its upstream source port mid-flow. QUIC needs it: toxiproxy is TCP only
// and this kernel has no netem.
package udpproxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Direction names one side of the flow.
type Direction int

const (
	// Upstream is client → server.
	Upstream Direction = iota
	// Downstream is server → client.
	Downstream
)

// String is "upstream" or "downstream".
func (d Direction) String() string {
	if d == Upstream {
		return "upstream"
	}
	return "downstream"
}

// Config configures a Proxy.
type Config struct {
	// Conn is the socket clients send to (required); the proxy closes it.
	Conn net.PacketConn
	// Upstream is the server's address (required).
	Upstream netip.AddrPort
	// OpenUpstream opens one client session's socket towards Upstream
	// (default: an unbound UDP socket in the caller's namespace).
	OpenUpstream func() (net.PacketConn, error)
	// Up and Down are the initial impairments (zero: none).
	Up, Down Impairment
	// Seed makes the random impairments reproducible (0 is a valid seed).
	Seed uint64
	// IdleTimeout closes a session without packets for this long (default 2 min).
	IdleTimeout time.Duration
	// Logger receives debug logs (nil: discarded).
	Logger *slog.Logger
}

// Proxy relays datagrams between clients and one upstream.
type Proxy struct {
	cfg      Config
	shapers  [2]*shaper
	mu       sync.Mutex
	sessions map[netip.AddrPort]*session
	closed   atomic.Bool
	wg       sync.WaitGroup
	rebinds  atomic.Uint64
	done     chan struct{}
	log      *slog.Logger
}

type session struct {
	client netip.AddrPort
	up     atomic.Pointer[net.PacketConn]
	last   atomic.Int64 // unix nanos of the last packet
}

// New starts a proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Conn == nil {
		return nil, errors.New("udpproxy: Config.Conn is nil (open the listening socket first)")
	}
	if !cfg.Upstream.IsValid() {
		return nil, errors.New("udpproxy: Config.Upstream is not set (want the server's address:port)")
	}
	if cfg.OpenUpstream == nil {
		cfg.OpenUpstream = func() (net.PacketConn, error) { return net.ListenPacket("udp", ":0") }
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{cfg: cfg, sessions: map[netip.AddrPort]*session{}, done: make(chan struct{}), log: log}
	p.shapers[Upstream] = newShaper(cfg.Seed, 1)
	p.shapers[Downstream] = newShaper(cfg.Seed, 2)
	p.shapers[Upstream].set(cfg.Up)
	p.shapers[Downstream].set(cfg.Down)
	p.wg.Add(2)
	go p.serve()
	go p.sweep()
	return p, nil
}

// Addr is the address clients send to.
func (p *Proxy) Addr() net.Addr { return p.cfg.Conn.LocalAddr() }

// Set replaces one direction's impairment; a blackhole schedule restarts.
func (p *Proxy) Set(d Direction, imp Impairment) { p.shapers[d].set(imp) }

// Impairment returns one direction's current impairment.
func (p *Proxy) Impairment(d Direction) Impairment { return p.shapers[d].get() }

// Stats returns one direction's counters.
func (p *Proxy) Stats(d Direction) Stats { return p.shapers[d].stats.snapshot() }

// Sessions is the number of client sessions.
func (p *Proxy) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// Rebinds is how many session sockets Rebind has replaced.
func (p *Proxy) Rebinds() uint64 { return p.rebinds.Load() }

func (p *Proxy) serve() {
	defer p.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := p.cfg.Conn.ReadFrom(buf)
		if err != nil {
			if !p.closed.Load() {
				p.log.Warn("udp proxy read", "err", err)
			}
			return
		}
		ua, ok := from.(*net.UDPAddr)
		if !ok {
			continue
		}
		client := ua.AddrPort()
		s, err := p.session(client)
		if err != nil {
			p.log.Warn("udp proxy session", "client", client, "err", err)
			continue
		}
		s.last.Store(time.Now().UnixNano())
		data := append([]byte(nil), buf[:n]...)
		up := net.UDPAddrFromAddrPort(p.cfg.Upstream)
		p.shapers[Upstream].submit(data, func(b []byte) {
			c := *s.up.Load()
			if _, err := c.WriteTo(b, up); err != nil && !p.closed.Load() {
				p.log.Debug("udp proxy write upstream", "err", err)
			}
		})
	}
}

func (p *Proxy) session(client netip.AddrPort) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.sessions[client]; ok {
		return s, nil
	}
	if p.closed.Load() {
		return nil, net.ErrClosed
	}
	s := &session{client: client}
	if err := p.bind(s); err != nil {
		return nil, err
	}
	p.sessions[client] = s
	p.log.Debug("udp proxy session", "client", client)
	return s, nil
}

// bind gives s a fresh upstream socket and starts its reader.
func (p *Proxy) bind(s *session) error {
	c, err := p.cfg.OpenUpstream()
	if err != nil {
		return fmt.Errorf("open upstream socket for %s: %w", s.client, err)
	}
	old := s.up.Swap(&c)
	if old != nil {
		_ = (*old).Close()
	}
	p.wg.Add(1)
	go p.readUpstream(s, c)
	return nil
}

func (p *Proxy) readUpstream(s *session, c net.PacketConn) {
	defer p.wg.Done()
	buf := make([]byte, 65535)
	client := net.UDPAddrFromAddrPort(s.client)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		s.last.Store(time.Now().UnixNano())
		data := append([]byte(nil), buf[:n]...)
		p.shapers[Downstream].submit(data, func(b []byte) {
			if _, err := p.cfg.Conn.WriteTo(b, client); err != nil && !p.closed.Load() {
				p.log.Debug("udp proxy write downstream", "err", err)
			}
		})
	}
}

// Rebind moves every session to a new upstream socket (a new source
// port), as a client behind a NAT whose mapping changed; replies to the
// old port are lost. It returns how many sessions moved.
func (p *Proxy) Rebind() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	n := 0
	for _, s := range p.sessions {
		if err := p.bind(s); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		p.rebinds.Add(1)
	}
	return n, errors.Join(errs...)
}

func (p *Proxy) sweep() {
	defer p.wg.Done()
	t := time.NewTicker(max(p.cfg.IdleTimeout/2, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		cut := time.Now().Add(-p.cfg.IdleTimeout).UnixNano()
		p.mu.Lock()
		for k, s := range p.sessions {
			if s.last.Load() < cut {
				_ = (*s.up.Load()).Close()
				delete(p.sessions, k)
			}
		}
		p.mu.Unlock()
	}
}

// Close stops the proxy, closing every socket.
func (p *Proxy) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	close(p.done)
	err := p.cfg.Conn.Close()
	p.mu.Lock()
	for _, s := range p.sessions {
		_ = (*s.up.Load()).Close()
	}
	p.mu.Unlock()
	for _, s := range p.shapers {
		s.close()
	}
	p.wg.Wait()
	return err
}
