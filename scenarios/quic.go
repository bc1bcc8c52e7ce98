package scenarios

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/fixtures/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/wire/reason"
	"github.com/nvcf/conformance/harness/probe"
	"github.com/nvcf/conformance/pki"
)

// quicScenarios: the reverse tunnel on UDP 50072, authenticated.
func quicScenarios() []Scenario {
	return []Scenario{
		{
			ID: "quic/tunnel-up", Layer: LayerQUIC, Labels: []string{LabelProbe},
			Summary: "a rogue Pylon registered with reverse tunnel brings the tunnel up with SNI = its Stargate's identity, the token and its client certificate",
			Expect:  Pass,
			Try:     func(ctx context.Context, e *Env, _ Setting) error { return tunnelCase(ctx, e, nil) },
		},
		tunnelRefusal("quic/bad-token", "a tunnel handshake with a wrong token is refused", reason.BadToken,
			func(e *Env, t *probe.QUICTarget) error { t.Token = "wrong-" + t.Token; return nil }),
		tunnelRefusal("quic/missing-client-cert", "a tunnel without a client certificate is refused", reason.ClientCertRequired,
			func(e *Env, t *probe.QUICTarget) error { t.TLS.Certificates = nil; return nil }),
		tunnelRefusal("quic/untrusted-client-cert", "a tunnel with a client certificate from an untrusted root is refused", reason.UntrustedClientCert,
			func(e *Env, t *probe.QUICTarget) error {
				c, err := e.ClientCert(pki.ClientWrongRoot)
				t.TLS.Certificates = []tls.Certificate{c}
				return err
			}),
		tunnelRefusal("quic/wrong-server-root", "a Pylon trusting another root refuses the tunnel's server", reason.UnknownAuthority,
			func(e *Env, t *probe.QUICTarget) error {
				t.TLS.Roots = e.WrongRoot("").Roots
				return nil
			}),
		tunnelRefusal("quic/unknown-sni", "the relay refuses an SNI naming no ready Stargate", reason.UnknownSNI,
			func(e *Env, t *probe.QUICTarget) error {
				t.TLS.ServerName = e.Identity(e.Bootstrap(), "stargate-99")
				return nil
			}),
		{
			ID: "quic/pylon-tunnel", Layer: LayerQUIC, Labels: []string{LabelPylon},
			Summary: "the cell's Pylon holds a connected reverse tunnel through every region's QUIC relay",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, _ Setting) error {
				return e.Eventually(ctx, "Pylon's tunnels connected", waitConverge, func(ctx context.Context) error {
					doc, err := e.PylonStatus(ctx, manifests.PylonName)
					if err != nil {
						return err
					}
					for _, r := range e.Regions() {
						if !connectedVia(doc, e.Topology.QUICHost(r)) {
							return fmt.Errorf("pylon holds no connected tunnel through %s: %s", e.Topology.QUICHost(r), doc)
						}
					}
					return nil
				})
			},
		},
	}
}

// tunnelCase registers a rogue inference server with reverse tunnel on
// the bootstrap region's first Stargate and dials the tunnel the ack
// names, after mangle (nil: as a good Pylon would).
func tunnelCase(ctx context.Context, e *Env, mangle func(*Env, *probe.QUICTarget) error) error {
	region := e.Bootstrap()
	p, err := firstPod(ctx, e, region)
	if err != nil {
		return err
	}
	id := uniqueID("tunnel")
	g := e.Ingress(region)
	g.Authority = e.Identity(region, p.Name)
	reg, err := e.Probe.Register(ctx, g, rogueRegistration(id, true))
	if err != nil {
		return fmt.Errorf("register before the tunnel: %w", err)
	}
	defer reg.Close()
	t := e.QUIC(region, p.Name, id)
	if a := reg.Ack.GetReverseTunnelPylonDialAddr(); a != "" {
		t.Addr = strings.TrimPrefix(a, "https://")
	}
	if sni := hostOf(reg.Ack.GetReverseTunnelTarget()); sni != "" {
		t.TLS.ServerName = sni
	}
	good, err := e.ClientCert(pki.ClientGood)
	if err != nil {
		return err
	}
	t.TLS.Certificates = []tls.Certificate{good}
	if mangle != nil {
		if err := mangle(e, &t); err != nil {
			return err
		}
	}
	return e.Probe.Tunnel(ctx, t)
}

func tunnelRefusal(id, summary string, r reason.Reason, mangle func(*Env, *probe.QUICTarget) error) Scenario {
	return Scenario{
		ID: id, Layer: LayerQUIC, Labels: []string{LabelProbe},
		Summary: summary, Expect: FailClosed(r), Control: "quic/tunnel-up",
		Try: func(ctx context.Context, e *Env, s Setting) error {
			if s == AsControl {
				return tunnelCase(ctx, e, nil)
			}
			return tunnelCase(ctx, e, mangle)
		},
	}
}

// connectedVia reports whether the document holds an entry mentioning host
// (a tunnel's dial address) whose state is "connected": a registration
// that merely names the tunnel's address does not count.
func connectedVia(doc Doc, host string) bool {
	for _, entry := range doc.Entries(host) {
		if st, _ := entry["state"].(string); st == "connected" {
			return true
		}
	}
	return false
}
