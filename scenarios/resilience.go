package scenarios

import (
	"context"
)

// resilienceScenarios run while the system is disturbed: pods die,
// networks misbehave (package faults). Every fault a case injects is noted
// on its Env and lands in its report.
func resilienceScenarios() []Scenario {
	return []Scenario{
		{
			ID: "resilience/stargate-pod-killed", Layer: LayerResilience, Labels: []string{LabelPylon, LabelProbe, LabelFaults},
			Summary: "a Stargate pod is killed: no stale identity stays advertised, Pylon re-registers with the replacement within a bounded time, and invocations keep succeeding",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, s Setting) error {
				if err := podReplacement(ctx, e, s); err != nil {
					return err
				}
				return invokeEventually(ctx, e, e.Bootstrap(), echoModel)
			},
		},
	}
}
