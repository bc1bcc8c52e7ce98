package scenarios

import (
	"context"
	"fmt"
	"strings"
)

// routesToNamed registers one rogue inference server per Stargate replica
// of the bootstrap region, each with that replica's identity as
// :authority, and requires each to appear on its replica's /status only.
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
		id := uniqueID("authority")
		reg, err := e.Probe.Register(ctx, e.ingressNaming(region, p.Name), rogueRegistration(id, false))
		if err != nil {
			return err
		}
		err = e.Eventually(ctx, "registration "+id+" on exactly "+p.Name, waitStatus, func(ctx context.Context) error {
			on, err := e.RegisteredOn(ctx, region, id)
			if err != nil {
				return err
			}
			return expectSet("replicas listing "+id, []string{p.Name}, on)
		})
		reg.Close()
		if err != nil {
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
		_, err = registerOnce(ctx, e, t, uniqueID("authority"))
		return err
	}
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

func aStargateWithNoPod(e *Env, region string, _ Pod) string {
	return e.Identity(region, "stargate-99")
}

func thePodsDashedIP(e *Env, region string, p Pod) string {
	return e.Identity(region, strings.ReplaceAll(p.IP, ".", "-"))
}
