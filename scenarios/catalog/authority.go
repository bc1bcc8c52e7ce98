package catalog

import (
	"github.com/nvcf/conformance/wire/reason"
)

// The authority layer: the router picks exactly the Stargate named by the
// HTTP/2 :authority, and never a default backend. Steps (package scenarios): steps_authority.go.

func authorityRoutesToNamed() Scenario {
	return Scenario{
		ID: "authority/routes-to-named", Layer: LayerAuthority, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a registration lands on exactly the Stargate named by :authority, checked on every replica's /status",
		Expect:  Pass,
	}
}

func authorityMissing() Scenario {
	return Scenario{
		ID: "authority/missing", Layer: LayerAuthority, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD7},
		Summary: "a registration whose :authority is the dial host, not a Stargate identity, is refused",
		Expect:  FailClosed(reason.InvalidAuthority).From(reason.OriginRouter), Control: "authority/routes-to-named",
	}
}

func authorityUnknown() Scenario {
	return Scenario{
		ID: "authority/unknown", Layer: LayerAuthority, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD7},
		Summary: "a registration naming a replica of this region under another region's identity domain is refused",
		Expect:  FailClosed(reason.InvalidAuthority).From(reason.OriginRouter), Control: "authority/routes-to-named",
	}
}

func authorityNoSuchPod() Scenario {
	return Scenario{
		ID: "authority/no-such-pod", Layer: LayerAuthority, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a registration naming a Stargate pod that does not exist is refused by the router as no-such-pod",
		// NVCF's router knows only ready pods and answers "target stargate
		// {pod} is not ready" for one that does not exist: accepted only
		// with the step's proof, from the Kubernetes API before the attempt
		// and after the refusal, that no such pod exists (absent.go).
		Expect: FailClosed(reason.NoSuchPod).From(reason.OriginRouter).OrIfAbsent(reason.NotReady), Control: "authority/routes-to-named",
	}
}

func authorityNotReady() Scenario {
	return Scenario{
		ID: "authority/not-ready", Layer: LayerAuthority, Labels: []string{LabelProbe, LabelDeploys},
		Covers:  []Requirement{DoD6},
		Summary: "a registration naming a Stargate pod that runs but is not ready is refused by the router as not-ready",
		Expect:  FailClosed(reason.NotReady).From(reason.OriginRouter), Control: "authority/routes-to-named",
	}
}

func authorityTerminating() Scenario {
	return Scenario{
		ID: "authority/terminating", Layer: LayerAuthority, Labels: []string{LabelProbe, LabelDeploys},
		Covers:  []Requirement{DoD6},
		Summary: "a registration naming a Stargate pod inside its termination window (deleted, still serving, listed serving and terminating) is refused by the router as not-ready",
		// The pod is a real Stargate deleted with a 60 s grace period that
		// serves on after SIGTERM (--shutdown-drain-timeout-ms, NVCF's own
		// flag, which the reference takes too), readiness unchanged:
		// Kubernetes lists it ready=false, serving=true, terminating=true,
		// proven with its deletionTimestamp and its answers before the
		// attempt and after (WithTerminatingStargate). NVCF's router keeps
		// only ready && serving && !terminating endpoints and says
		// "target stargate {pod} is not ready", as for a pod never ready:
		// no reason of its own. A router that read serving as ready routes
		// there, and the registration shows on the terminating pod.
		Expect: FailClosed(reason.NotReady).From(reason.OriginRouter), Control: "authority/routes-to-named",
		Takes: terminatingTakes,
	}
}

func authorityDashedIP() Scenario {
	return Scenario{
		ID: "authority/dashed-ip", Layer: LayerAuthority, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD5, DoD7, Defect4},
		Summary: "a registration naming a pod by its dashed IP (the SRV defect's identity) is refused",
		// The dashed IP fits the identity template, so NVCF's router reads
		// it as a pod name, knows no ready pod of that name and says
		// not-ready: accepted only with the proof that no pod (and no
		// endpoint) has that name, while the pod whose IP it is runs ready
		// (a router that resolved dashed IPs would route to it, and the
		// case would fail as accepted).
		Expect: FailClosed(reason.InvalidAuthority, reason.NoSuchPod).From(reason.OriginRouter).OrIfAbsent(reason.NotReady), Control: "authority/routes-to-named",
	}
}
