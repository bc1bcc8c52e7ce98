package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvcf/conformance/wire/reason"
)

// Options configure a Prober. The zero value resolves names through the
// system resolver and gives each probe 10 s.
type Options struct {
	// DNS is the external DNS of the environment (the agent's, 127.0.0.88:53
	// on the embedded provider); names are resolved through it when set.
	DNS netip.AddrPort
	// Timeout bounds each probe that was given a context without a deadline
	// (default 10 s).
	Timeout time.Duration
	// Logger receives one line per probe; nil discards.
	Logger *slog.Logger
}

// Prober runs probes and keeps their transcript. It is safe for concurrent use.
type Prober struct {
	resolver *net.Resolver
	timeout  time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	entries []Entry
	calls   atomic.Uint64 // numbers the invocations' request ids
}

// New returns a Prober.
func New(o Options) *Prober {
	p := &Prober{resolver: net.DefaultResolver, timeout: o.Timeout, log: o.Logger}
	if p.timeout <= 0 {
		p.timeout = 10 * time.Second
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if o.DNS.IsValid() {
		dns := o.DNS.String()
		p.resolver = &net.Resolver{
			PreferGo: true,
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, dns)
			},
		}
	}
	return p
}

// TLS says how a probe secures its connection. There is no option to skip
// verification: a probe either verifies against Roots or speaks plaintext.
type TLS struct {
	// Plaintext speaks h2c, plain HTTP or (for QUIC, meaningless) nothing at
	// all: set it to show that a TLS port refuses plaintext.
	Plaintext bool
	// Roots are the trusted roots. Nil (and not Plaintext) means "no trust
	// configured": the probe fails with reason.NoTrust before dialling.
	Roots *x509.CertPool
	// ServerName is the name sent as SNI and verified in the server's
	// certificate; empty means the dialled host.
	ServerName string
	// Certificates: the first is presented as client certificate whenever
	// the server asks for one.
	Certificates []tls.Certificate
}

// config returns the crypto/tls configuration for dialling host with ALPN protos.
func (s TLS) config(host string, protos ...string) (*tls.Config, error) {
	if s.Roots == nil {
		return nil, reason.Wrap(reason.NoTrust, errors.New("probe has no trusted roots: give it the environment's CA pool"))
	}
	name := s.ServerName
	if name == "" {
		name = host
	}
	cfg := &tls.Config{
		RootCAs:    s.Roots,
		ServerName: name,
		NextProtos: protos,
		MinVersion: tls.VersionTLS12,
	}
	if len(s.Certificates) > 0 {
		// Present the certificate whatever CAs the server names: crypto/tls
		// would otherwise send none for an untrusted one, and the probe is
		// here to show what the server does with it.
		c := s.Certificates[0]
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	return cfg, nil
}

// describe renders the security settings for the transcript.
func (s TLS) describe() string {
	switch {
	case s.Plaintext:
		return "plaintext"
	case s.Roots == nil:
		return "tls(no roots)"
	default:
		d := "tls"
		if s.ServerName != "" {
			d += " name=" + s.ServerName
		}
		if len(s.Certificates) > 0 {
			d += " client-cert"
		}
		return d
	}
}

// Entry is one probe in the transcript.
type Entry struct {
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// Probe names what was tried ("grpc.watch", "grpc.register", "quic.tunnel", "http.invoke", "http.status").
	Probe string `json:"probe"`
	// Target is the dialled address and the settings used.
	Target string `json:"target"`
	// Outcome is "ok" or the error.
	Outcome string `json:"outcome"`
	// Reason is the classified reason of a failure, Origin who refused.
	Reason reason.Reason `json:"reason,omitempty"`
	Origin reason.Origin `json:"origin,omitempty"`
}

// Transcript returns a copy of the probes run so far.
func (p *Prober) Transcript() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.entries...)
}

// WriteTranscript writes the transcript as text, one probe per line.
func (p *Prober) WriteTranscript(w io.Writer) error {
	for _, e := range p.Transcript() {
		r := ""
		if e.Reason != reason.None {
			r = " reason=" + string(e.Reason)
			if e.Origin != "" {
				r += " origin=" + string(e.Origin)
			}
		}
		if _, err := fmt.Fprintf(w, "%s %-13s %s (%s)%s: %s\n", e.Start.UTC().Format(time.RFC3339Nano), e.Probe, e.Target, e.Duration.Round(time.Millisecond), r, e.Outcome); err != nil {
			return err
		}
	}
	return nil
}

// record appends one entry and returns err unchanged.
func (p *Prober) record(probe, target string, start time.Time, err error) error {
	e := Entry{Start: start, Duration: time.Since(start), Probe: probe, Target: target, Outcome: "ok"}
	if err != nil {
		e.Outcome = err.Error()
		e.Reason, e.Origin = reason.Of(err), reason.OriginOf(err)
	}
	p.mu.Lock()
	p.entries = append(p.entries, e)
	p.mu.Unlock()
	p.log.Info("probe", "probe", probe, "target", target, "outcome", e.Outcome, "reason", e.Reason, "origin", e.Origin)
	return err
}

// bound gives ctx the Prober's default deadline when it has none.
func (p *Prober) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, p.timeout)
}

// dialTCP resolves addr through the Prober's resolver and dials it.
func (p *Prober) dialTCP(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Resolver: p.resolver}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}

// resolveUDP resolves addr (host:port) to a UDP address.
func (p *Prober) resolveUDP(ctx context.Context, addr string) (*net.UDPAddr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w (want host:port)", addr, err)
	}
	ap, err := p.resolver.LookupNetIP(ctx, "ip4", host)
	if err != nil || len(ap) == 0 {
		if ip, perr := netip.ParseAddr(host); perr == nil {
			ap = []netip.Addr{ip}
		} else {
			return nil, fmt.Errorf("resolve %q: %w", host, err)
		}
	}
	return net.ResolveUDPAddr("udp", net.JoinHostPort(ap[0].String(), port))
}
