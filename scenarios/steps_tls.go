package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/scenarios/probe"
)

// verifiedWatch watches every region through its ingress with the trusted
// root and requires concrete Stargates in each answer.
func verifiedWatch(ctx context.Context, e *Env, _ Setting) error {
	for _, r := range e.Regions() {
		resp, err := e.Probe.Watch(ctx, e.Ingress(r))
		if err != nil {
			return err
		}
		if len(resp.GetStargates()) == 0 {
			return fmt.Errorf("region %s: WatchStargates over verified TLS answered no Stargate", r)
		}
	}
	return nil
}

// watchBootstrapIngress watches the bootstrap region through its ingress,
// with faulty applied to the target under the scenario's own configuration.
func watchBootstrapIngress(faulty func(e *Env, t *probe.GRPCTarget)) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		t := e.Ingress(e.Bootstrap())
		if s == Faulty {
			faulty(e, &t)
		}
		_, err := e.Probe.Watch(ctx, t)
		return err
	}
}

// trustingAnotherRoot makes the probe trust only the wrong root.
func trustingAnotherRoot(e *Env, t *probe.GRPCTarget) { t.TLS = e.WrongRoot(t.TLS.ServerName) }

// inPlaintext makes the probe speak plaintext h2c.
func inPlaintext(_ *Env, t *probe.GRPCTarget) { t.TLS.Plaintext = true }

// pylonRegisteredEverywhere waits up to d until the cell's Pylon holds a
// healthy registration with every Stargate of every region, and proves it
// on the server side: every ready replica of every region holds it.
func pylonRegisteredEverywhere(d time.Duration) Try {
	return func(ctx context.Context, e *Env, _ Setting) error {
		if err := e.PylonRegisteredEverywhere(ctx, manifests.PylonName, d); err != nil {
			return err
		}
		id, err := e.pylonServerID(ctx)
		if err != nil {
			return err
		}
		return e.heldExactlyOn(ctx, presence{id: id, shared: echoModel})
	}
}
