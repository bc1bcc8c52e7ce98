package catalog

import (
	"github.com/nvcf/conformance/wire/reason"
)

// The invocation layer: OpenAI-style invocations through Stargate HTTP,
// over the reverse tunnel, to the echo server beside Pylon. Steps (package scenarios):
// steps_invocation.go.

func invocationInRegion() Scenario {
	return Scenario{
		ID: "invocation/in-region", Layer: LayerInvocation, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a chat completion entering the bootstrap region reaches the echo server and answers 200",
		Expect:  Pass,
	}
}

func invocationAcrossRegions() Scenario {
	return Scenario{
		ID: "invocation/across-regions", Layer: LayerInvocation, Labels: []string{LabelProbe, LabelCrossRegion},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD6, Defect5},
		Summary:         "a chat completion entering each remote region, which Pylon found only through watch_stargate_urls, answers 200",
		Expect:          Pass,
	}
}

func invocationModelDiscovery() Scenario {
	return Scenario{
		ID: "invocation/model-discovery", Layer: LayerInvocation, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "ListModels on every Stargate replica's model-discovery port (50073) lists the echo model that Pylon registered, and not a model nobody serves",
		Expect:  Pass,
	}
}

func invocationNoEligibleBackend() Scenario {
	return Scenario{
		ID: "invocation/no-eligible-backend", Layer: LayerInvocation, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a model no registration announces answers 404 with x-stargate-error-code no_eligible_candidates (a registered model with no routable server is a bare 503 instead)",
		Expect:  FailClosed(reason.NoEligibleCandidates).From(reason.OriginStargate), Control: "invocation/in-region",
	}
}
