package lb

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// udpForwarder relays datagrams on one address: each client address gets a
// session with its own upstream socket connected to one backend (chosen
// round-robin when the session starts), so a QUIC connection stays on one
// backend; replies go back from the listening address. Sessions idle for
// longer than idle are closed. A client IP keeps its backend across source
// ports (affinity, also expiring after idle), so a QUIC client whose port
// changes (NAT rebinding, connection migration) still reaches the server
// that holds its connection.
type udpForwarder struct {
	pc   *net.UDPConn
	be   backends
	idle time.Duration
	log  *slog.Logger
	wg   sync.WaitGroup
	stop chan struct{}

	mu       sync.Mutex
	sessions map[netip.AddrPort]*udpSession
	affinity map[netip.Addr]affinity
}

type affinity struct {
	backend netip.AddrPort
	last    time.Time
}

type udpSession struct {
	client  netip.AddrPort
	backend netip.AddrPort
	up      *net.UDPConn
	mu      sync.Mutex
	last    time.Time
}

func (s *udpSession) touch() { s.mu.Lock(); s.last = time.Now(); s.mu.Unlock() }

func (s *udpSession) idleFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.last)
}

func listenUDP(addr netip.AddrPort, idle time.Duration, log *slog.Logger) (*udpForwarder, error) {
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return nil, err
	}
	f := &udpForwarder{pc: pc, idle: idle, log: log, stop: make(chan struct{}), sessions: map[netip.AddrPort]*udpSession{}, affinity: map[netip.Addr]affinity{}}
	f.wg.Add(2)
	guard.Go("lb: udp listener", func() { f.serve() })
	guard.Go("lb: udp session janitor", func() { f.janitor() })
	return f, nil
}

func (f *udpForwarder) addr() netip.AddrPort { return f.pc.LocalAddr().(*net.UDPAddr).AddrPort() }

func (f *udpForwarder) serve() {
	defer f.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, client, err := f.pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.log.Warn("udp read", "err", err)
			}
			return
		}
		s := f.session(client)
		if s == nil {
			continue // no backend: drop, as a real LB would
		}
		s.touch()
		if _, err := s.up.Write(buf[:n]); err != nil {
			f.log.Debug("udp to backend", "backend", s.backend, "err", err)
		}
	}
}

// session finds or starts the session of client.
func (f *udpForwarder) session(client netip.AddrPort) *udpSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.sessions[client]; ok {
		return s
	}
	backend, ok := netip.AddrPort{}, false
	if a, hit := f.affinity[client.Addr()]; hit && slices.Contains(f.be.get(), a.backend) {
		backend, ok = a.backend, true
	} else if backend, ok = f.be.pick(); !ok {
		return nil
	}
	f.affinity[client.Addr()] = affinity{backend: backend, last: time.Now()}
	up, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(backend))
	if err != nil {
		f.log.Debug("udp dial backend", "backend", backend, "err", err)
		return nil
	}
	s := &udpSession{client: client, backend: backend, up: up, last: time.Now()}
	f.sessions[client] = s
	f.wg.Add(1)
	guard.Go("lb: udp replies", func() { f.replies(s) })
	return s
}

// replies copies datagrams from the backend back to the client until the
// session's socket is closed.
func (f *udpForwarder) replies(s *udpSession) {
	defer f.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.up.Read(buf)
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue // ICMP port unreachable: the backend may come back
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				f.log.Debug("udp session ends", "client", s.client, "backend", s.backend, "err", err)
				f.drop(s)
			}
			return
		}
		s.touch()
		if _, err := f.pc.WriteToUDPAddrPort(buf[:n], s.client); err != nil {
			f.log.Debug("udp to client", "client", s.client, "err", err)
		}
	}
}

// drop ends session s (if it is still the client's).
func (f *udpForwarder) drop(s *udpSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessions[s.client] == s {
		delete(f.sessions, s.client)
	}
	_ = s.up.Close()
}

// janitor closes idle sessions and forgets stale affinities.
func (f *udpForwarder) janitor() {
	defer f.wg.Done()
	t := time.NewTicker(max(f.idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			f.mu.Lock()
			live := map[netip.Addr]bool{}
			for k, s := range f.sessions {
				if s.idleFor() > f.idle {
					_ = s.up.Close()
					delete(f.sessions, k)
				} else {
					live[k.Addr()] = true
				}
			}
			for ip, a := range f.affinity {
				if !live[ip] && time.Since(a.last) > f.idle {
					delete(f.affinity, ip)
				}
			}
			f.mu.Unlock()
		}
	}
}

// sessionCount is the number of live sessions.
func (f *udpForwarder) sessionCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

func (f *udpForwarder) close() {
	close(f.stop)
	_ = f.pc.Close()
	f.mu.Lock()
	for k, s := range f.sessions {
		_ = s.up.Close()
		delete(f.sessions, k)
	}
	f.mu.Unlock()
	f.wg.Wait()
}
