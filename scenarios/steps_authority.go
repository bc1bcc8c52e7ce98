package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/scenarios/probe"
)

// routesToNamed registers one rogue inference server per Stargate replica
// of the bootstrap region, each with that replica's identity as
// :authority, and requires, on the server side, each registration and the
// registration call itself to reach exactly its replica among every
// replica of every region.
func routesToNamed(ctx context.Context, e *Env, _ Setting) error {
	region := e.Bootstrap()
	pods, err := e.StargatePods(ctx, region)
	if err != nil {
		return err
	}
	if len(pods) < 2 {
		return fmt.Errorf("region %s has %d ready Stargate pods; routing needs at least 2 to mean anything", region, len(pods))
	}
	for _, p := range pods {
		if err := registerThrough(ctx, e, e.ingressNaming(region, p.Name), region+"/"+p.Name); err != nil {
			return err
		}
	}
	return nil
}

// registerNaming registers a rogue inference server through the bootstrap
// region's ingress with the :authority bad names (given the region's first
// ready replica); with the control's configuration it names that replica.
func registerNaming(bad func(e *Env, region string, p Pod) string) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		region := e.Bootstrap()
		p, err := firstPod(ctx, e, region)
		if err != nil {
			return err
		}
		t := e.ingressNaming(region, p.Name)
		if s == Faulty {
			t.Authority = bad(e, region, p)
		}
		return registerThrough(ctx, e, t, region+"/"+p.Name)
	}
}

// registerNamingAbsent is registerNaming with the :authority naming, under
// the bootstrap region's identity template, the pod name pod gives (given
// the region's first ready replica), which must name no pod: proven before
// the attempt and after its refusal (provingAbsent). With the control's
// configuration it names that replica.
func registerNamingAbsent(pod func(e *Env, region string, p Pod) string) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		region := e.Bootstrap()
		p, err := firstPod(ctx, e, region)
		if err != nil {
			return err
		}
		t := e.ingressNaming(region, p.Name)
		if s != Faulty {
			return registerThrough(ctx, e, t, region+"/"+p.Name)
		}
		name := pod(e, region, p)
		t.Authority = e.Identity(region, name)
		return e.provingAbsent(ctx, region, name, func(ctx context.Context) error {
			return registerThrough(ctx, e, t, region+"/"+p.Name)
		})
	}
}

// beside runs fn while a real Stargate pod of region, which the router
// must not route to, runs beside the ready ones, every server-side sweep
// asking it too: (*Env).WithNotReadyStargate or
// (*Env).WithTerminatingStargate.
type beside func(e *Env, ctx context.Context, region string, fn func(ctx context.Context, p Pod) error) error

// registerNamingUnroutable registers a rogue inference server through the
// bootstrap region's ingress while a Stargate pod of that region that is
// not to be routed to runs beside the ready ones (with); the :authority
// names that pod, or, with the control's configuration, the region's first
// ready replica. A request routed to it shows on its own counters.
func registerNamingUnroutable(with beside) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		return with(e, ctx, e.Bootstrap(), func(ctx context.Context, unroutable Pod) error {
			return registerNaming(func(e *Env, region string, _ Pod) string { return e.Identity(region, unroutable.Name) })(ctx, e, s)
		})
	}
}

// registerThrough registers a rogue inference server through t and proves
// the outcome on the server side. Accepted: the registration, and the
// registration call, reached exactly the replica named ("region/pod") and
// no other. Refused: for three heartbeat periods no replica of any region
// holds the registration or received a registration call; the refusal is
// returned.
func registerThrough(ctx context.Context, e *Env, t probe.GRPCTarget, named string) error {
	before, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	id := uniqueID("authority")
	reg, err := e.Probe.Register(ctx, t, rogueRegistration(id))
	if err != nil {
		if serr := e.heldNowhere(ctx, absence{id: id, model: probeModel(id), before: before, routed: true}); serr != nil {
			return fmt.Errorf("the registration with :authority %q was refused (%v), but: %w", t.Authority, err, serr)
		}
		return err
	}
	defer reg.Close()
	return accepted(e.heldExactlyOn(ctx, presence{id: id, model: probeModel(id), on: []string{named}, before: before}))
}

// The bad authorities of registerNaming.

func theDialHost(e *Env, region string, _ Pod) string { return e.Ingress(region).Addr }

// aStargateElsewhere names the control's replica under another region's
// identity domain: only the suffix differs from the control, so a router
// that routed by the first label alone would accept it.
func aStargateElsewhere(e *Env, region string, p Pod) string {
	for _, r := range e.Regions() {
		if r != region {
			return e.Identity(r, p.Name)
		}
	}
	return p.Name + ".sg.elsewhere." + e.Topology.Domain
}

// noSuchPod names a Stargate pod that no workload of the harness creates
// (a StatefulSet ordinal beyond every topology's replicas).
const noSuchPod = "stargate-99"

// thePodsDashedName is the pod's IP with dashes for dots, the name the
// SRV defect gives a Deployment pod.
func thePodsDashedName(_ *Env, _ string, p Pod) string {
	return strings.ReplaceAll(p.IP, ".", "-")
}
