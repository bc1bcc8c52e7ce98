// Package mitm is a man in the middle for the TLS downgrade fault: it sits
// where a TLS server should be and answers in plaintext, either as an h2c
// (cleartext HTTP/2) server or by relaying the client's bytes to a
// plaintext upstream (TLS stripped). A correct client refuses both.
package mitm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// Mode is how the man in the middle answers.
type Mode string

const (
	// H2C answers as a cleartext HTTP/2 server.
	H2C Mode = "h2c"
	// Strip relays the client's bytes to a plaintext upstream.
	Strip Mode = "strip"
)

// Config configures a Server.
type Config struct {
	// Listener accepts the diverted clients (required); the server closes it.
	Listener net.Listener
	Mode     Mode
	// PlainUpstream is where Strip relays to (host:port of a plaintext
	// server, e.g. the router's h2c port).
	PlainUpstream string
	// Dial connects to PlainUpstream (default net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug logs (nil: discarded).
	Logger *slog.Logger
}

// Server is a running man in the middle.
type Server struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	served atomic.Uint64
	// plain counts clients that spoke plaintext HTTP/2 (the h2c preface):
	// clients that went on over the downgraded channel.
	plain atomic.Uint64
	log   *slog.Logger
}

// Start serves cfg.
func Start(cfg Config) (*Server, error) {
	if cfg.Listener == nil {
		return nil, errors.New("mitm: Config.Listener is nil")
	}
	switch cfg.Mode {
	case H2C:
	case Strip:
		if cfg.PlainUpstream == "" {
			return nil, errors.New("mitm strip: PlainUpstream is required (the plaintext server to relay to)")
		}
	default:
		return nil, fmt.Errorf("mitm mode %q: want h2c or strip", cfg.Mode)
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}, log: log}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Served is how many clients the man in the middle has answered.
func (s *Server) Served() uint64 { return s.served.Load() }

// Plaintext is how many clients spoke plaintext HTTP/2 to it (h2c mode):
// each one accepted the downgrade.
func (s *Server) Plaintext() uint64 { return s.plain.Load() }

func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.ctx.Err() != nil {
			return false
		}
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
	return true
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.cfg.Listener.Accept()
		if err != nil {
			return
		}
		if !s.track(c, true) {
			_ = c.Close()
			return
		}
		s.served.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.track(c, false)
			defer c.Close()
			if s.cfg.Mode == H2C {
				s.h2c(c)
			} else {
				s.strip(c)
			}
		}()
	}
}

func (s *Server) h2c(c net.Conn) {
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(greetingTimeout))
	head, err := br.Peek(len(http2.ClientPreface))
	_ = c.SetReadDeadline(time.Time{})
	if err == nil && string(head) == http2.ClientPreface {
		s.plain.Add(1)
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "plaintext man in the middle\n")
		})
		base := &http.Server{ErrorLog: log.New(io.Discard, "", 0)}
		(&http2.Server{}).ServeConn(&peeked{Conn: c, r: br}, &http2.ServeConnOpts{Context: s.ctx, Handler: h, BaseConfig: base})
		return
	}
	// Anything else (a TLS ClientHello): answer as an h2c server does to a
	// bogus greeting, in plaintext, then read until the client hangs up so
	// that it sees our bytes rather than a reset.
	fr := http2.NewFramer(c, nil)
	_ = fr.WriteSettings()
	_ = fr.WriteGoAway(0, http2.ErrCodeProtocol, []byte("bogus greeting"))
	_ = c.SetReadDeadline(time.Now().Add(greetingTimeout))
	_, _ = io.Copy(io.Discard, br)
}

// greetingTimeout bounds how long a silent client is kept.
const greetingTimeout = 30 * time.Second

// peeked is a connection whose first bytes were read into r.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

func (s *Server) strip(c net.Conn) {
	up, err := s.cfg.Dial(s.ctx, "tcp", s.cfg.PlainUpstream)
	if err != nil {
		s.log.Debug("mitm strip dial", "upstream", s.cfg.PlainUpstream, "err", err)
		return
	}
	if !s.track(up, true) {
		_ = up.Close()
		return
	}
	defer s.track(up, false)
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// Close stops the server and closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	s.cancel()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.cfg.Listener.Close()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
