package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/nvcf/conformance/wire/reason"
)

// A connection that dies before the peer said a word (EOF, reset) tells
// nothing by itself. The probe then asks the peer once more, in the other
// language: a peer that answers a ClientHello speaks TLS (so our plaintext
// was refused), a peer that answers an HTTP/2 preface with a SETTINGS frame
// or an HTTP/1 status line speaks plaintext (so our TLS was refused).

const sniffTimeout = 3 * time.Second

// speaksTLS reports whether the peer at addr answers a TLS ClientHello with
// any TLS message. The handshake verifies against an empty pool, so it never
// completes: a ServerHello followed by a verification failure, or a TLS
// alert, proves the peer speaks TLS.
func (p *Prober) speaksTLS(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, sniffTimeout)
	defer cancel()
	raw, err := p.dialTCP(ctx, addr)
	if err != nil {
		return false
	}
	defer raw.Close()
	host, _, _ := net.SplitHostPort(addr)
	c := tls.Client(raw, &tls.Config{RootCAs: x509.NewCertPool(), ServerName: host, NextProtos: []string{"h2"}})
	err = c.HandshakeContext(ctx)
	var cve *tls.CertificateVerificationError
	var oe *net.OpError
	switch {
	case err == nil, errors.As(err, &cve):
		return true
	case errors.As(err, &oe) && oe.Op == "remote error":
		return true
	}
	return false
}

// h2Preface is the client connection preface of HTTP/2 followed by an empty SETTINGS frame.
var h2Preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// speaksPlaintext reports whether the peer at addr answers an HTTP/2
// preface in plaintext (a SETTINGS frame) or with an HTTP/1 status line.
func (p *Prober) speaksPlaintext(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, sniffTimeout)
	defer cancel()
	c, err := p.dialTCP(ctx, addr)
	if err != nil {
		return false
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := c.Write(h2Preface); err != nil {
		return false
	}
	var hdr [9]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return false
	}
	return hdr[3] == 4 || bytes.HasPrefix(hdr[:], []byte("HTTP/"))
}

// looksLikeTLS reports whether b starts with a TLS record header (handshake or alert).
func looksLikeTLS(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03
}

// connRecord watches one connection: the first bytes the peer sent and the
// first error of a read, which gRPC otherwise flattens into a status string.
type connRecord struct {
	mu        sync.Mutex
	dialed    bool
	handshake bool // the TLS handshake (or, in plaintext, nothing) completed
	first     []byte
	err       error
}

func (r *connRecord) setErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil && err != nil {
		r.err = err
	}
}

func (r *connRecord) snapshot() (dialed, handshake bool, first []byte, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dialed, r.handshake, append([]byte(nil), r.first...), r.err
}

// recordingConn notes what the peer sent first and the first read error.
type recordingConn struct {
	net.Conn
	rec *connRecord
}

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.rec.mu.Lock()
	if len(c.rec.first) < 16 && n > 0 {
		c.rec.first = append(c.rec.first, b[:min(n, 16-len(c.rec.first))]...)
	}
	c.rec.mu.Unlock()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		c.rec.setErr(err)
	}
	return n, err
}

// explain returns the most telling cause the record holds for a failed
// call and the reason sniffing adds, given whether the probe spoke TLS.
func (p *Prober) explain(ctx context.Context, rec *connRecord, addr string, plaintext bool) (error, reason.Reason) {
	dialed, handshake, first, cause := rec.snapshot()
	if !dialed {
		return cause, reason.None
	}
	if plaintext {
		if looksLikeTLS(first) {
			return cause, reason.PlaintextToTLS
		}
		if len(first) == 0 && Classify(cause) == reason.Unknown && p.speaksTLS(context.WithoutCancel(ctx), addr) {
			return cause, reason.PlaintextToTLS
		}
		return cause, reason.None
	}
	if len(first) > 0 && !looksLikeTLS(first) {
		return cause, reason.PlaintextToTLS // the peer answered our ClientHello in plaintext
	}
	if !handshake && len(first) == 0 && Classify(cause) == reason.Unknown && p.speaksPlaintext(context.WithoutCancel(ctx), addr) {
		return cause, reason.PlaintextToTLS
	}
	return cause, reason.None
}
