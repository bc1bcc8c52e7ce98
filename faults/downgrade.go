package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/nvcf/conformance/faults/internal/mitm"
	"github.com/nvcf/conformance/faults/internal/netnsx"
)

// DowngradeMode is how the man in the middle answers.
type DowngradeMode = mitm.Mode

// The downgrade modes.
const (
	// DowngradeH2C answers as a cleartext HTTP/2 server.
	DowngradeH2C DowngradeMode = mitm.H2C
	// downgradeStrip relays the client's bytes to a plaintext server.
	downgradeStrip DowngradeMode = mitm.Strip
)

// Downgrade puts a man in the middle on an ingress path (the same DNAT
// seam as the TCP faults) that answers TLS clients in plaintext. The client must
// refuse (reason plaintext-to-tls) and never continue in plaintext.
type Downgrade struct {
	Path Path
	Mode DowngradeMode
	// plainUpstream is the plaintext server that downgradeStrip relays to
	// (e.g. the backend router's h2c address).
	plainUpstream netip.AddrPort
}

// Kind is kindDowngrade.
func (Downgrade) Kind() Kind { return kindDowngrade }

// Describe names the path and mode.
func (d Downgrade) Describe() string {
	s := fmt.Sprintf("%s mitm=%s", d.Path, d.Mode)
	if d.Mode == downgradeStrip {
		s += " plain-upstream=" + d.plainUpstream.String()
	}
	return s
}

func (d Downgrade) inject(ctx context.Context, e *env) (undoFunc, error) {
	if err := d.Path.validate(); err != nil {
		return nil, err
	}
	l, err := netnsx.Listen(d.Path.Netns, "tcp", netip.AddrPortFrom(d.Path.Gateway, 0).String())
	if err != nil {
		return nil, fmt.Errorf("listen for the downgrade MITM on %s: %w", d.Path.Gateway, err)
	}
	plain := ""
	if d.plainUpstream.IsValid() {
		plain = d.plainUpstream.String()
	}
	s, err := mitm.Start(mitm.Config{Listener: l, Mode: d.Mode, PlainUpstream: plain, Dial: netnsx.Dialer{Netns: d.Path.Netns}.DialContext, Logger: e.log})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	stop := func(context.Context) error {
		e.note("answered %d clients in plaintext; %d spoke plaintext HTTP/2", s.Served(), s.Plaintext())
		e.setAccepted(s.Plaintext())
		return s.Close()
	}
	undo, err := redirect(ctx, e, d.Path, "tcp", l.Addr().(*net.TCPAddr).AddrPort())
	if err != nil {
		return nil, errors.Join(err, stop(ctx))
	}
	return chain(stop, undo), nil
}
