package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

// QUICTarget is where and how the reverse-tunnel probe dials.
type QUICTarget struct {
	// Addr is the UDP host:port (the ack's reverse_tunnel_pylon_dial_addr).
	Addr string
	// TLS secures the tunnel; ServerName is the SNI (the ack's
	// reverse_tunnel_target) and the name the server certificate must cover.
	TLS TLS
	// InferenceServerID and Token go into the tunnel's Handshake.
	InferenceServerID, Token string
	// Models are the models a held tunnel (OpenTunnel) echoes, the ones
	// its registration announced.
	Models []string
}

func (t QUICTarget) describe() string {
	return fmt.Sprintf("%s %s server=%s token=%t", t.Addr, t.TLS.describe(), t.InferenceServerID, t.Token != "")
}

// Tunnel dials the reverse tunnel like a Pylon would, sends the Handshake
// and waits for Stargate's HandshakeAck. It returns nil when the handshake
// was accepted, and closes the tunnel again: it shows that a tunnel comes
// up (or why not). OpenTunnel keeps it open.
func (p *Prober) Tunnel(ctx context.Context, t QUICTarget) error {
	held, err := p.openTunnel(ctx, t, "quic.tunnel")
	if held != nil {
		held.Close()
	}
	return err
}

// OpenTunnel is Tunnel that keeps an accepted tunnel open until Close (or
// until ctx ends), serving what Stargate sends through it as a real Pylon
// in front of the echo server would: GET /health answers 200 (a real
// Stargate checks every tunnel so every second, and routes to a server,
// and counts it in stargate_active_inference_servers, only while the
// checks pass), and other requests pass a real Pylon's checks
// (tunnel.Admit) to an echo server of t.Models. So a real Stargate shows
// the tunnel in its metrics, and an invocation of one of t.Models
// through it is echoed by the probe.
func (p *Prober) OpenTunnel(ctx context.Context, t QUICTarget) (*HeldTunnel, error) {
	return p.openTunnel(ctx, t, "quic.hold")
}

// HeldTunnel is a reverse tunnel the probe holds open (OpenTunnel).
type HeldTunnel struct {
	conn   *quic.Conn
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	// health counts the GET /health checks answered, real those that
	// carried a real Stargate's headers; requests the other requests.
	health, real, requests atomic.Int64
}

// HealthChecks returns how many GET /health checks Stargate sent through
// the tunnel, and how many of them carried a real Stargate's headers
// (x-request-id stargate-health-<id>, x-model stargate-health,
// x-input-tokens 0).
func (h *HeldTunnel) HealthChecks() (all, withRealHeaders int64) {
	return h.health.Load(), h.real.Load()
}

// Requests returns how many other requests came through the tunnel.
func (h *HeldTunnel) Requests() int64 { return h.requests.Load() }

// Done is closed once the tunnel has ended; Err then says why.
func (h *HeldTunnel) Done() <-chan struct{} { return h.done }

// Err is why the tunnel ended (nil while it is open, and after Close).
func (h *HeldTunnel) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Close closes the tunnel and waits for its requests to end.
func (h *HeldTunnel) Close() {
	h.cancel()
	_ = h.conn.CloseWithError(0, "probe done")
	<-h.done
}

// handler answers what Stargate sends through a held tunnel for t.
func (h *HeldTunnel) handler(t QUICTarget) http.Handler {
	models := tunnel.Admit(echo.Handler(t.Models, nil), nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != tunnel.HealthPath {
			h.requests.Add(1)
			models.ServeHTTP(w, r)
			return
		}
		h.health.Add(1)
		if r.Method == http.MethodGet && r.Header.Get(tunnel.HeaderRequestID) == "stargate-health-"+t.InferenceServerID &&
			r.Header.Get(tunnel.HeaderModel) == "stargate-health" && r.Header.Get(tunnel.HeaderInputTokens) == "0" {
			h.real.Add(1)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
}

func (p *Prober) openTunnel(ctx context.Context, t QUICTarget, probe string) (held *HeldTunnel, err error) {
	start := time.Now()
	defer func() { p.record(probe, t.describe(), start, err) }()
	if t.TLS.Plaintext {
		return nil, fmt.Errorf("quic tunnel to %s: QUIC has no plaintext mode; give the probe roots", t.Addr)
	}
	host, _, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, fmt.Errorf("quic target %q: %w (want host:port)", t.Addr, err)
	}
	cfg, err := t.TLS.config(host) // raw QUIC: no ALPN, as a real Pylon
	if err != nil {
		return nil, err
	}
	cfg.MinVersion = 0x0304 // TLS 1.3, as QUIC requires
	dctx, cancel := p.bound(ctx)
	defer cancel()
	raddr, err := p.resolveUDP(dctx, t.Addr)
	if err != nil {
		return nil, reason.Wrap(reason.ConnectionRefused, err)
	}
	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, fmt.Errorf("open UDP socket: %w", err)
	}
	tr := &quic.Transport{Conn: pc}
	conn, err := tr.Dial(dctx, raddr, cfg, &quic.Config{HandshakeIdleTimeout: 5 * time.Second, MaxIdleTimeout: 10 * time.Second,
		KeepAlivePeriod: 2 * time.Second, MaxIncomingStreams: 100, MaxIncomingUniStreams: -1})
	if err != nil {
		tr.Close()
		pc.Close()
		return nil, classified(fmt.Errorf("quic dial %s: %w", t.describe(), err), reason.Message{})
	}
	ack, err := p.handshake(dctx, conn, t)
	if err == nil && !ack.Accepted {
		// The ack is the tunnel server's, which is Stargate.
		err = reason.WrapFrom(reason.AckReason(ack.Reason), reason.OriginStargate, fmt.Errorf("quic tunnel %s: handshake refused with reason %q", t.describe(), ack.Reason))
	} else if err != nil {
		if cause := context.Cause(conn.Context()); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (connection: %w)", err, cause)
		}
		err = classified(fmt.Errorf("quic tunnel %s: %w", t.describe(), err), remoteRejection(conn))
	}
	if err != nil {
		_ = conn.CloseWithError(0, "probe done")
		tr.Close()
		pc.Close()
		return nil, err
	}
	life, stop := context.WithCancel(ctx)
	held = &HeldTunnel{conn: conn, cancel: stop, done: make(chan struct{})}
	go func() {
		defer close(held.done)
		defer pc.Close()
		defer tr.Close()
		defer conn.CloseWithError(0, "probe done")
		serr := tunnel.ServeConn(life, conn, held.handler(t), nil, p.log)
		if life.Err() == nil {
			held.err = serr
		}
	}()
	return held, nil
}

func (p *Prober) handshake(ctx context.Context, conn *quic.Conn, t QUICTarget) (tunnel.HandshakeAck, error) {
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return tunnel.HandshakeAck{}, fmt.Errorf("open handshake stream: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = st.SetDeadline(dl)
	}
	if err := tunnel.WriteHandshake(st, tunnel.Handshake{InferenceServerID: t.InferenceServerID, AuthToken: tunnel.Token(t.Token)}); err != nil {
		return tunnel.HandshakeAck{}, fmt.Errorf("send handshake: %w", err)
	}
	_ = st.Close()
	ack, err := tunnel.ReadAck(st)
	if err != nil {
		return tunnel.HandshakeAck{}, fmt.Errorf("read handshake ack: %w", err)
	}
	return ack, nil
}

// remoteRejection returns the typed refusal a peer closed conn with, if it
// closed it with one (closeRefusal).
func remoteRejection(conn *quic.Conn) reason.Message {
	var ae *quic.ApplicationError
	if cause := context.Cause(conn.Context()); errors.As(cause, &ae) {
		if m, ok := closeRefusal(ae); ok {
			return m
		}
	}
	return reason.Message{}
}

// closeRefusal reads the refusal of a QUIC application close the peer
// sent: a reference component's reason.Message under tunnel.CodeRejected,
// or a real router relay's reason phrase under code 0
// (reason.OfRealClose). Anything else names no refusal.
func closeRefusal(ae *quic.ApplicationError) (reason.Message, bool) {
	if !ae.Remote {
		return reason.Message{}, false
	}
	switch ae.ErrorCode {
	case tunnel.CodeRejected:
		if m, err := reason.ParseMessage(ae.ErrorMessage); err == nil {
			return m, true
		}
	case 0:
		if r, o, ok := reason.OfRealClose(ae.ErrorMessage); ok {
			return reason.Message{Reason: r, Origin: o, Detail: ae.ErrorMessage}, true
		}
	}
	return reason.Message{}, false
}
