package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/fixtures/wire/reason"
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
}

func (t QUICTarget) describe() string {
	return fmt.Sprintf("%s %s server=%s token=%t", t.Addr, t.TLS.describe(), t.InferenceServerID, t.Token != "")
}

// Tunnel dials the reverse tunnel like a Pylon would, sends the Handshake
// and waits for Stargate's HandshakeAck. It returns nil when the handshake
// was accepted, and closes the tunnel again: the probe shows that a tunnel
// comes up (or why not), it serves no requests.
func (p *Prober) Tunnel(ctx context.Context, t QUICTarget) (err error) {
	start := time.Now()
	defer func() { p.record("quic.tunnel", t.describe(), start, err) }()
	ctx, cancel := p.bound(ctx)
	defer cancel()
	if t.TLS.Plaintext {
		return fmt.Errorf("quic tunnel to %s: QUIC has no plaintext mode; give the probe roots", t.Addr)
	}
	host, _, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return fmt.Errorf("quic target %q: %w (want host:port)", t.Addr, err)
	}
	cfg, err := t.TLS.config(host) // raw QUIC: no ALPN, as a real Pylon
	if err != nil {
		return err
	}
	cfg.MinVersion = 0x0304 // TLS 1.3, as QUIC requires
	raddr, err := p.resolveUDP(ctx, t.Addr)
	if err != nil {
		return reason.Wrap(reason.ConnectionRefused, err)
	}
	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return fmt.Errorf("open UDP socket: %w", err)
	}
	defer pc.Close()
	tr := &quic.Transport{Conn: pc}
	defer tr.Close()
	conn, err := tr.Dial(ctx, raddr, cfg, &quic.Config{HandshakeIdleTimeout: 5 * time.Second, MaxIdleTimeout: 10 * time.Second})
	if err != nil {
		return classified(fmt.Errorf("quic dial %s: %w", t.describe(), err), reason.Message{})
	}
	defer conn.CloseWithError(0, "probe done")
	ack, err := p.handshake(ctx, conn, t)
	if err != nil {
		if cause := context.Cause(conn.Context()); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (connection: %w)", err, cause)
		}
		return classified(fmt.Errorf("quic tunnel %s: %w", t.describe(), err), remoteRejection(conn))
	}
	if !ack.Accepted {
		// The ack is the tunnel server's, which is Stargate.
		return reason.WrapFrom(reason.AckReason(ack.Reason), reason.OriginStargate, fmt.Errorf("quic tunnel %s: handshake refused with reason %q", t.describe(), ack.Reason))
	}
	return nil
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
