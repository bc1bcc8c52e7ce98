package scenarios

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/scenarios/probe"
)

// echoModel is the model the echo inference server behind Pylon serves.
const echoModel = "echo"

// invokesInBootstrap waits until an invocation of the echo model entering
// the bootstrap region succeeds.
func invokesInBootstrap(ctx context.Context, e *Env, _ Setting) error {
	return invokeEventually(ctx, e, e.Bootstrap(), echoModel)
}

// invokesInEveryRemoteRegion waits until an invocation of the echo model
// entering each region other than the bootstrap one succeeds.
func invokesInEveryRemoteRegion(ctx context.Context, e *Env, _ Setting) error {
	for _, r := range e.Regions() {
		if r == e.Bootstrap() {
			continue
		}
		if err := invokeEventually(ctx, e, r, echoModel); err != nil {
			return err
		}
	}
	return nil
}

// everyBootstrapStargateInvokes waits until every Stargate replica of the
// bootstrap region serves an invocation of the echo model.
func everyBootstrapStargateInvokes(ctx context.Context, e *Env, _ Setting) error {
	return invokeEveryStargate(ctx, e, e.Bootstrap(), echoModel)
}

// everyBootstrapStargateListsEcho waits until every Stargate replica of
// the bootstrap region lists the echo model, and only it.
func everyBootstrapStargateListsEcho(ctx context.Context, e *Env, _ Setting) error {
	return modelsOnEveryStargate(ctx, e, e.Bootstrap(), echoModel)
}

// invokeUnservedModel invokes, in the bootstrap region, a model nobody
// serves (the echo model with the control's configuration), once.
func invokeUnservedModel(ctx context.Context, e *Env, s Setting) error {
	model := uniqueID("no-such-model")
	if s == AsControl {
		model = echoModel
	}
	err := e.chatEchoed(ctx, e.Invoke(e.Bootstrap()), model, "hello")
	return err
}

// invokeRepeatedly invokes the echo model in the bootstrap region n times
// in a row, each of which must succeed; message and failure are formats
// of the attempt (0-based) and its number (1-based).
func invokeRepeatedly(n int, message, failure string) Try {
	return func(ctx context.Context, e *Env, _ Setting) error {
		for i := range n {
			if err := e.chatEchoed(ctx, e.Invoke(e.Bootstrap()), echoModel, fmt.Sprintf(message, i)); err != nil {
				return fmt.Errorf(failure+": %w", i+1, err)
			}
		}
		return nil
	}
}

// invokeEventually invokes model in region until it answers 200 (the
// registration and tunnel may still be settling after a cell switch).
func invokeEventually(ctx context.Context, e *Env, region, model string) error {
	var last error
	err := e.Eventually(ctx, "an invocation of "+model+" in "+region+" to succeed", waitConverge, func(ctx context.Context) error {
		last = e.chatEchoed(ctx, e.Invoke(region), model, "hello from the harness")
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
		return e.chatEchoed(ctx, t, model, "hello from the harness to "+p.Name)
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

// chatEchoed invokes model through t with content and a fresh nonce, as
// a streaming chat completion (the only kind a real Pylon forwards), and
// requires the answer's event stream to carry them back: only the echo
// server behind Pylon repeats them, so a 200 that Stargate (or anything
// else on the path) made up without reaching it does not count.
func (e *Env) chatEchoed(ctx context.Context, t probe.HTTPTarget, model, content string) error {
	_, err := e.chatEchoedBy(ctx, t, model, content)
	return err
}

// chatEchoedBy is chatEchoed that also returns the worker that answered:
// the echo server names its Pylon's inference server id in every chunk
// (system_fingerprint); empty when the answer names none.
func (e *Env) chatEchoedBy(ctx context.Context, t probe.HTTPTarget, model, content string) (worker string, err error) {
	content += " " + uniqueID("nonce")
	resp, err := e.Probe.ChatCompletion(ctx, t, model, content)
	if err != nil {
		return "", err
	}
	if resp.Stream == nil || !strings.Contains(resp.Stream.Text, content) {
		return "", fmt.Errorf("invocation of %s through %s answered %d without echoing %q in its event stream: it never reached the echo server behind Pylon: %.200s", model, t.URL, resp.Status, content, resp.Body)
	}
	return resp.Stream.Worker, nil
}
