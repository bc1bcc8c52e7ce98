package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/fixtures/wire/reason"
)

// authorityScenarios: the router picks exactly the Stargate named by the
// HTTP/2 :authority, and never a default backend.
func authorityScenarios() []Scenario {
	return []Scenario{
		{
			ID: "authority/routes-to-named", Layer: LayerAuthority, Labels: []string{LabelProbe},
			Summary: "a registration lands on exactly the Stargate named by :authority, checked on every replica's /status",
			Expect:  Pass, Try: routesToNamed,
		},
		authorityRefusal("authority/missing", "a registration whose :authority is the dial host, not a Stargate identity, is refused",
			[]reason.Reason{reason.InvalidAuthority},
			func(e *Env, region, _ string) string { return e.Ingress(region).Addr }),
		authorityRefusal("authority/unknown", "a registration naming another region's Stargate is refused",
			[]reason.Reason{reason.InvalidAuthority},
			func(e *Env, region, pod string) string { return "stargate-0.sg.elsewhere." + e.Topology.Domain }),
		authorityRefusal("authority/not-ready", "a registration naming a Stargate with no ready pod is refused as unavailable",
			[]reason.Reason{reason.Unavailable},
			func(e *Env, region, _ string) string { return e.Identity(region, "stargate-99") }),
		authorityRefusal("authority/dashed-ip", "a registration naming a pod by its dashed IP (the SRV defect's identity) is refused",
			[]reason.Reason{reason.InvalidAuthority, reason.Unavailable},
			func(e *Env, region, ip string) string { return e.Identity(region, strings.ReplaceAll(ip, ".", "-")) }),
	}
}

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
		t := e.Ingress(region)
		t.Authority = e.Identity(region, p.Name)
		reg, err := e.Probe.Register(ctx, t, rogueRegistration(id, false))
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

// authorityRefusal builds a fail-closed authority case: the rogue Pylon
// registers with the authority bad() names; with the control's
// configuration it names the first ready replica.
func authorityRefusal(id, summary string, rs []reason.Reason, bad func(e *Env, region, podOrIP string) string) Scenario {
	return Scenario{
		ID: id, Layer: LayerAuthority, Labels: []string{LabelProbe},
		Summary: summary, Expect: FailClosed(rs...), Control: "authority/routes-to-named",
		Try: func(ctx context.Context, e *Env, s Setting) error {
			region := e.Bootstrap()
			p, err := firstPod(ctx, e, region)
			if err != nil {
				return err
			}
			t := e.Ingress(region)
			t.Authority = e.Identity(region, p.Name)
			if s == Faulty {
				arg := p.Name
				if id == "authority/dashed-ip" {
					arg = p.IP
				}
				t.Authority = bad(e, region, arg)
			}
			_, err = registerOnce(ctx, e, t, uniqueID("authority"))
			return err
		},
	}
}
