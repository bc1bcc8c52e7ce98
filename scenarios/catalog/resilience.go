package catalog

import (
	"time"

	"github.com/nvcf/conformance/wire/reason"
)

// The resilience layer runs while the system is disturbed: pods die,
// networks between clusters misbehave, someone sits in the path of a
// fresh Pylon's TLS, the ingress certificate rotates in place. Steps (package scenarios):
// steps_faults.go, steps_partition.go, steps_rotation.go.

func resilienceStargatePodKilled() Scenario {
	return Scenario{
		ID: "resilience/stargate-pod-killed", Layer: LayerResilience, Labels: []string{LabelPylon, LabelProbe, LabelFaults},
		Covers:  []Requirement{DoD5, DoD6},
		Summary: "a Stargate pod is killed: no stale identity stays advertised, Pylon re-registers with the replacement within a bounded time, and invocations keep succeeding",
		Expect:  Pass,
	}
}

func resiliencePartitionWorkersRemote() Scenario {
	return Scenario{
		ID: "resilience/partition-workers-remote", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelCrossRegion},
		Covers:   []Requirement{DoD6},
		Summary:  "a partition between the workers and the remote region (healed once the drop shows, within 20 s, or three missed heartbeats and 5 s if longer) drops Pylon's registrations there, leaves the bootstrap region's untouched, and they return after healing",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   Pass,
		Takes:    6 * time.Second,
	}
}

func resilienceQUICLossDelay() Scenario {
	return Scenario{
		ID: "resilience/quic-loss-delay", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
		Covers:   []Requirement{DoD6},
		Summary:  "under 20 % loss and 100 ms ± 20 ms delay on the tunnel's UDP path, invocations still succeed, and afterwards every Stargate replica's tunnel serves",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   Pass,
		// Five invocations through 100 ms delay and 20 % loss, with
		// retransmissions: about 11 s in the runs of docs/performance.md.
		Takes: 12 * time.Second,
	}
}

func resilienceQUICBlackholeReconnect() Scenario {
	return Scenario{
		ID: "resilience/quic-blackhole-reconnect", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
		Covers:   []Requirement{DoD6},
		Summary:  "after a 5 s blackhole on the tunnel's UDP path the tunnel to every Stargate replica comes back and serves invocations within a bounded time",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   Pass,
	}
}

func resilienceDowngradeMITM() Scenario {
	return Scenario{
		ID: "resilience/downgrade-mitm", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelDeploys},
		Covers:   []Requirement{DoD1, DoD7, Defect1},
		Summary:  "a man in the middle on the bootstrap ingress path answers plaintext h2c: a fresh Pylon refuses with plaintext-to-tls and never registers there",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.PlaintextToTLS).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func resilienceDNSSpoof() Scenario {
	return Scenario{
		ID: "resilience/dns-spoof", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelDeploys},
		Covers:   []Requirement{DoD1, DoD7},
		Summary:  "the workers' DNS answers the bootstrap ingress name with another region's ingress: a fresh Pylon refuses the handshake, never registers",
		Requires: Requirements{Workloads: independentOfWorkload},
		// The remote ingress's certificate chains to the trusted root and
		// covers only its own names: the name is the one thing wrong.
		Expect: FailClosed(reason.HostnameMismatch).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func resilienceCertRotationGood() Scenario {
	return Scenario{
		ID: "resilience/cert-rotation-good", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
		Covers:   []Requirement{DoD1},
		Summary:  "the ingress certificate is rotated in place to a re-issued good one: every watch and invocation during the rotation succeeds, and the new certificate is served",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   Pass,
	}
}

func resilienceCertRotationWrongRoot() Scenario {
	return Scenario{
		ID: "resilience/cert-rotation-wrong-root", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
		Covers:   []Requirement{DoD7},
		Summary:  "the ingress certificate is rotated in place to one of the wrong root: new handshakes fail closed with unknown-authority",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.UnknownAuthority).From(reason.OriginProbe), Control: "tls/verified-watch",
	}
}
