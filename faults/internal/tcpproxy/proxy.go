// Package tcpproxy embeds toxiproxy's toxic chains in a TCP proxy whose
// listener and upstream dialer the caller supplies, so that it can listen
// on a bridge gateway and dial from the host (or from a test's network
// namespace). Toxics are toxiproxy's own: latency with jitter, bandwidth,
// slow_close, timeout, reset_peer, slicer, limit_data; per direction.
package tcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/rs/zerolog"
)

// Toxic is one toxiproxy toxic.
type Toxic struct {
	// Name identifies the toxic within the proxy (default "<type>_<stream>").
	Name string `json:"name,omitempty"`
	// Type is the toxiproxy type: latency, bandwidth, slow_close, timeout,
	// reset_peer, slicer or limit_data.
	Type string `json:"type"`
	// Stream is "upstream" (client → server) or "downstream".
	Stream string `json:"stream"`
	// Toxicity is the probability that a connection gets the toxic (0 means 1).
	Toxicity float32 `json:"toxicity"`
	// Attributes are the type's attributes, e.g. {"latency": 100, "jitter": 20}.
	Attributes map[string]int64 `json:"attributes"`
}

// Config configures a Proxy.
type Config struct {
	// Listener accepts clients (required); the proxy closes it.
	Listener net.Listener
	// Upstream is the server's host:port (required).
	Upstream string
	// Dial connects to Upstream (default: a net.Dialer in the caller's namespace).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Toxics are added before the first client is accepted.
	Toxics []Toxic
	// Logger receives debug logs (nil: discarded).
	Logger *slog.Logger
}

// Proxy is a running TCP proxy.
type Proxy struct {
	cfg    Config
	server *toxiproxy.ApiServer
	tp     *toxiproxy.Proxy
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	// conns are closed by Close; they are kept until then (a fault is short-lived).
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	served atomic.Uint64
	log    *slog.Logger
}

// Served is how many client connections the proxy has relayed.
func (p *Proxy) Served() uint64 { return p.served.Load() }

// New starts a proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Listener == nil {
		return nil, errors.New("tcpproxy: Config.Listener is nil (open the listener first)")
	}
	if cfg.Upstream == "" {
		return nil, errors.New("tcpproxy: Config.Upstream is empty (want the server's host:port)")
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	tp := toxiproxy.NewProxy(server, "fault", cfg.Listener.Addr().String(), cfg.Upstream)
	nop := zerolog.Nop()
	tp.Logger = &nop
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{cfg: cfg, server: server, tp: tp, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}, log: log}
	for _, t := range cfg.Toxics {
		if err := p.AddToxic(t); err != nil {
			cancel()
			return nil, err
		}
	}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the listening address.
func (p *Proxy) Addr() net.Addr { return p.cfg.Listener.Addr() }

// AddToxic adds a toxic to every current and future connection.
func (p *Proxy) AddToxic(t Toxic) error {
	if _, err := stream.ParseDirection(t.Stream); err != nil {
		return fmt.Errorf("toxic %q: stream %q: want upstream or downstream", t.Type, t.Stream)
	}
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode toxic %q: %w", t.Type, err)
	}
	if _, err := p.tp.Toxics.AddToxicJson(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("add toxic %s (types: latency, bandwidth, slow_close, timeout, reset_peer, slicer, limit_data): %w", data, err)
	}
	return nil
}

// RemoveToxic removes the toxic called name.
func (p *Proxy) RemoveToxic(name string) error {
	if err := p.tp.Toxics.RemoveToxic(p.ctx, name); err != nil {
		return fmt.Errorf("remove toxic %q: %w", name, err)
	}
	return nil
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.cfg.Listener.Accept()
		if err != nil {
			if p.ctx.Err() == nil {
				p.log.Warn("tcp proxy accept", "err", err)
			}
			return
		}
		upstream, err := p.cfg.Dial(p.ctx, "tcp", p.cfg.Upstream)
		if err != nil {
			p.log.Debug("tcp proxy dial upstream", "upstream", p.cfg.Upstream, "err", err)
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		if p.ctx.Err() != nil {
			p.mu.Unlock()
			_ = client.Close()
			_ = upstream.Close()
			return
		}
		p.served.Add(1)
		p.conns[client] = struct{}{}
		p.conns[upstream] = struct{}{}
		p.mu.Unlock()
		name := client.RemoteAddr().String()
		// The links need the *net.TCPConn itself (reset_peer sets SO_LINGER).
		p.tp.Toxics.StartLink(p.server, name+"upstream", client, upstream.(io.WriteCloser), stream.Upstream)
		p.tp.Toxics.StartLink(p.server, name+"downstream", upstream, client.(io.WriteCloser), stream.Downstream)
	}
}

// Close stops accepting, removes the toxics and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.cancel()
	p.mu.Unlock()
	err := p.cfg.Listener.Close()
	p.wg.Wait()
	p.tp.Toxics.ResetToxics(context.Background())
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
