package scenarios

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/nvcf/conformance/fixtures/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/wire/reason"
	"github.com/nvcf/conformance/harness/probe"
)

// echoModel is the model the echo inference server behind Pylon serves.
const echoModel = "echo"

// invocationScenarios: OpenAI-style invocations through Stargate HTTP,
// over the reverse tunnel, to the echo server beside Pylon.
func invocationScenarios() []Scenario {
	return []Scenario{
		{
			ID: "invocation/in-region", Layer: LayerInvocation, Labels: []string{LabelProbe},
			Summary: "a chat completion entering the bootstrap region reaches the echo server and answers 200",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, _ Setting) error {
				return invokeEventually(ctx, e, e.Bootstrap(), echoModel)
			},
		},
		{
			ID: "invocation/across-regions", Layer: LayerInvocation, Labels: []string{LabelProbe, LabelCrossRegion},
			Summary: "a chat completion entering each remote region, which Pylon found only through watch_stargate_urls, answers 200",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, _ Setting) error {
				for _, r := range e.Regions() {
					if r == e.Bootstrap() {
						continue
					}
					if err := invokeEventually(ctx, e, r, echoModel); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "invocation/model-discovery", Layer: LayerInvocation, Labels: []string{LabelProbe},
			Summary: "ListModels on every Stargate replica's model-discovery port (50073) lists the echo model that Pylon registered, and not a model nobody serves",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, _ Setting) error {
				return modelsOnEveryStargate(ctx, e, e.Bootstrap(), echoModel)
			},
		},
		{
			ID: "invocation/no-eligible-backend", Layer: LayerInvocation, Labels: []string{LabelProbe},
			Summary: "a model nobody serves answers 404 with x-stargate-error-code no_eligible_candidates",
			Expect:  FailClosed(reason.NoEligibleCandidates), Control: "invocation/in-region",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				model := uniqueID("no-such-model")
				if s == AsControl {
					model = echoModel
				}
				_, err := e.Probe.ChatCompletion(ctx, e.Invoke(e.Bootstrap()), model, "hello")
				return err
			},
		},
	}
}

// invokeEventually invokes model in region until it answers 200 (the
// registration and tunnel may still be settling after a cell switch).
func invokeEventually(ctx context.Context, e *Env, region, model string) error {
	var last error
	err := e.Eventually(ctx, "an invocation of "+model+" in "+region+" to succeed", waitConverge, func(ctx context.Context) error {
		_, last = e.Probe.ChatCompletion(ctx, e.Invoke(region), model, "hello from the harness")
		return last
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (%w)", last, err)
	}
	return err
}

// invokeEveryStargate waits until every ready Stargate pod of region
// answers an invocation of model on its own pod IP. Each replica holds its
// own reverse tunnel, and the load balancer may keep picking a healthy one;
// this proves them all, so a fault's case leaves no broken tunnel behind
// for the next case to trip over.
func invokeEveryStargate(ctx context.Context, e *Env, region, model string) error {
	return e.everyStargate(ctx, region, "an invocation of "+model+" through every Stargate of "+region+" to succeed", func(ctx context.Context, p Pod) error {
		t := probe.HTTPTarget{URL: "http://" + net.JoinHostPort(p.IP, strconv.Itoa(manifests.HTTPPort))}
		_, err := e.Probe.ChatCompletion(ctx, t, model, "hello from the harness to "+p.Name)
		return err
	})
}

// modelsOnEveryStargate waits until ListModels, asked on each ready
// Stargate pod's model-discovery port for model and an unknown one,
// answers exactly [model].
func modelsOnEveryStargate(ctx context.Context, e *Env, region, model string) error {
	unknown := uniqueID("no-such-model")
	return e.everyStargate(ctx, region, "ListModels on every Stargate of "+region+" to list "+model, func(ctx context.Context, p Pod) error {
		t := probe.GRPCTarget{Addr: net.JoinHostPort(p.IP, strconv.Itoa(manifests.ModelsPort)), TLS: probe.TLS{Plaintext: true}}
		got, err := e.Probe.ListModels(ctx, t, []string{model, unknown})
		if err != nil {
			return err
		}
		return expectSet("models listed", []string{model}, got)
	})
}

// everyStargate waits (waitConverge) until check passes on every ready
// Stargate pod of region in one sweep; the error names the pod that
// failed last.
func (e *Env) everyStargate(ctx context.Context, region, what string, check func(context.Context, Pod) error) error {
	var last error
	err := e.Eventually(ctx, what, waitConverge, func(ctx context.Context) error {
		pods, err := e.StargatePods(ctx, region)
		if err != nil {
			last = err
			return err
		}
		if len(pods) == 0 {
			last = fmt.Errorf("region %s has no ready Stargate pod", region)
			return last
		}
		for _, p := range pods {
			if err := check(ctx, p); err != nil {
				last = fmt.Errorf("stargate %s: %w", p.Name, err)
				return last
			}
		}
		return nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (%w)", last, err)
	}
	return err
}
