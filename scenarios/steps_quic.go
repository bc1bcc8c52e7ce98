package scenarios

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/scenarios/probe"
	"github.com/nvcf/conformance/wire/reason"
)

// bringTunnelUp registers a rogue inference server with reverse tunnel on
// the bootstrap region's first Stargate and dials the tunnel the ack
// names as a good Pylon would, after faulty (when given) under the
// scenario's own configuration.
func bringTunnelUp(faulty func(*Env, *probe.QUICTarget) error) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		if s == AsControl {
			return tunnelCase(ctx, e, nil)
		}
		return tunnelCase(ctx, e, faulty)
	}
}

// tunnelCase registers a rogue inference server with reverse tunnel on
// the bootstrap region's first Stargate and dials the tunnel the ack
// names, after mangle (nil: as a good Pylon would), and proves the outcome
// on the server side for the id the handshake carries: an accepted tunnel
// handshake on exactly that replica, or, after a refusal, for three
// heartbeat periods no tunnel of the id anywhere and its registration
// nowhere else (nowhere at all when mangle gave the handshake another id).
func tunnelCase(ctx context.Context, e *Env, mangle func(*Env, *probe.QUICTarget) error) error {
	region := e.Bootstrap()
	p, err := firstPod(ctx, e, region)
	if err != nil {
		return err
	}
	before, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	id := uniqueID("tunnel")
	reg, err := e.Probe.Register(ctx, e.ingressNaming(region, p.Name), rogueRegistration(id))
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
	// The held tunnel echoes the registration's model; it answers the
	// health checks whatever mangle does.
	t.Models = []string{probeModel(id)}
	if mangle != nil {
		if err := mangle(e, &t); err != nil {
			return err
		}
	}
	named := region + "/" + p.Name
	// The handshake's id: the registered one unless mangle changed it.
	hid, registeredOn := t.InferenceServerID, ""
	if hid == id {
		registeredOn = named
	}
	held, err := e.Probe.OpenTunnel(ctx, t)
	if err != nil {
		// The registration stays up meanwhile: a late tunnel would show.
		if serr := e.heldNowhere(ctx, absence{id: hid, model: probeModel(hid), before: before, registeredOn: registeredOn}); serr != nil {
			return fmt.Errorf("the tunnel was refused (%v), but: %w", err, serr)
		}
		return err
	}
	// The tunnel stays open, answering Stargate's health checks, until the
	// server side has shown it: on a real Stargate the registration turns
	// active (stargate_active_inference_servers) only with its tunnel up
	// and healthy.
	defer held.Close()
	err = e.heldExactlyOn(ctx, presence{id: hid, model: probeModel(hid), on: []string{named}, before: before, tunnel: true})
	if err != nil {
		all, real := held.HealthChecks()
		err = fmt.Errorf("%w (the probe's tunnel answered %d health check(s), %d with a real Stargate's headers; ended: %v)", err, all, real, held.Err())
	}
	return accepted(err)
}

// The faulty ingredients of bringTunnelUp.

func withWrongToken(_ *Env, t *probe.QUICTarget) error {
	t.Token = "wrong-" + t.Token
	return nil
}

func withoutClientCert(_ *Env, t *probe.QUICTarget) error {
	t.TLS.Certificates = nil
	return nil
}

func withUntrustedClientCert(e *Env, t *probe.QUICTarget) error {
	c, err := e.ClientCert(pki.ClientWrongRoot)
	t.TLS.Certificates = []tls.Certificate{c}
	return err
}

func trustingAnotherServerRoot(e *Env, t *probe.QUICTarget) error {
	t.TLS.Roots = e.WrongRoot("").Roots
	return nil
}

// withUnregisteredID keeps the registration and the ack's target and
// address, but the handshake names a fresh id that no Stargate ever held.
func withUnregisteredID(_ *Env, t *probe.QUICTarget) error {
	t.InferenceServerID = uniqueID("unregistered")
	return nil
}

// tunnelToAbsentPod is tunnelCase with the tunnel's SNI naming a Stargate
// pod of the bootstrap region that does not exist (noSuchPod), proven
// absent before the attempt and after its refusal (provingAbsent); with the
// control's configuration, the registration's own replica.
func tunnelToAbsentPod(ctx context.Context, e *Env, s Setting) error {
	if s == AsControl {
		return tunnelCase(ctx, e, nil)
	}
	return e.provingAbsent(ctx, e.Bootstrap(), noSuchPod, func(ctx context.Context) error {
		return tunnelCase(ctx, e, func(e *Env, t *probe.QUICTarget) error {
			t.TLS.ServerName = e.Identity(e.Bootstrap(), noSuchPod)
			return nil
		})
	})
}

// tunnelToUnroutable is tunnelCase while a Stargate pod of the bootstrap
// region that is not to be routed to runs beside the ready ones (with):
// the tunnel's SNI names that pod, or, with the control's configuration,
// the registration's own replica. Every server-side sweep asks that pod
// too.
func tunnelToUnroutable(with beside) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		return with(e, ctx, e.Bootstrap(), func(ctx context.Context, unroutable Pod) error {
			if s == AsControl {
				return tunnelCase(ctx, e, nil)
			}
			return tunnelCase(ctx, e, func(e *Env, t *probe.QUICTarget) error {
				t.TLS.ServerName = e.Identity(e.Bootstrap(), unroutable.Name)
				return nil
			})
		})
	}
}

// pylonTunnelsConnected waits until the cell's Pylon holds a connected
// reverse tunnel through every region's QUIC relay. At the deadline the
// error carries the last reason Pylon reported (unknown-authority, say).
func pylonTunnelsConnected(ctx context.Context, e *Env, _ Setting) error {
	var last error
	err := e.Eventually(ctx, "Pylon's tunnels connected", waitConverge, func(ctx context.Context) error {
		doc, err := e.PylonStatus(ctx, manifests.PylonName)
		if err != nil {
			return err
		}
		for _, r := range e.Regions() {
			if !connectedVia(doc, e.Topology.QUICHost(r)) {
				last = fmt.Errorf("pylon holds no connected tunnel through %s: %s", e.Topology.QUICHost(r), doc)
				if f := doc.Failure(reason.OriginPylon); f != nil {
					last = errors.Join(f, last)
				}
				return last
			}
		}
		return nil
	})
	if err != nil && last != nil && reason.Of(last) != reason.Unknown {
		return fmt.Errorf("%w (%w)", last, err)
	}
	return err
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
