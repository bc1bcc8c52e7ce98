package catalog

// The registration layer: Pylon registers with every advertised Stargate
// in every region, over explicit https:// addresses. Steps (package scenarios):
// steps_registration.go.

import "github.com/nvcf/conformance/wire/reason"

func registrationEveryStargateEveryRegion() Scenario {
	return Scenario{
		ID: "registration/every-stargate-every-region", Layer: LayerRegistration, Labels: []string{LabelPylon, LabelCrossRegion},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD1, DoD6},
		Summary:         "the cell's Pylon holds a healthy registration with every live Stargate of every region",
		Requires:        Requirements{Discoveries: bothDiscoveries},
		Expect:          Pass,
	}
}

func registrationExplicitHTTPS() Scenario {
	return Scenario{
		ID: "registration/explicit-https", Layer: LayerRegistration, Labels: []string{LabelProbe},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD4},
		Summary:         "the bootstrap address and every advertised gRPC dial address are explicit https:// URIs",
		Expect:          Pass,
	}
}

func registrationSchemeLessDialAddrRefused() Scenario {
	return Scenario{
		ID: "registration/scheme-less-dial-addr-refused", Layer: LayerRegistration, Labels: []string{LabelDeploys},
		Covers:   []Requirement{DoD4},
		Summary:  "a Stargate given a scheme-less gRPC dial address to advertise refuses it at start-up",
		Requires: Requirements{Workloads: independentOfWorkload},
		// Taken, it would be handed to every Pylon in WatchStargates, which
		// a legacy Pylon dials in plaintext.
		Expect: FailClosed(reason.SchemeRequired).From(reason.OriginStargate), Control: "registration/explicit-https",
	}
}

func registrationEmptyDialAddrRefused() Scenario {
	return Scenario{
		ID: "registration/empty-dial-addr-refused", Layer: LayerRegistration, Labels: []string{LabelDeploys},
		Covers:   []Requirement{DoD4},
		Summary:  "a Stargate given an empty gRPC dial address to advertise in the secure profile refuses it at start-up",
		Requires: Requirements{Workloads: independentOfWorkload},
		// Taken, every Pylon would be handed no dial address at all.
		Expect: FailClosed(reason.AddressRequired).From(reason.OriginStargate), Control: "registration/explicit-https",
	}
}

func registrationHTTPDialAddrRefused() Scenario {
	return Scenario{
		ID: "registration/http-dial-addr-refused", Layer: LayerRegistration, Labels: []string{LabelDeploys},
		Covers:   []Requirement{DoD4},
		Summary:  "a Stargate given an http:// gRPC dial address to advertise in the secure profile refuses it at start-up",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.InsecureRefused).From(reason.OriginStargate), Control: "registration/explicit-https",
	}
}

func registrationRogueAck() Scenario {
	return Scenario{
		ID: "registration/rogue-ack", Layer: LayerRegistration, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a rogue Pylon's registration asking for a reverse tunnel is acknowledged with the named Stargate's identity as tunnel target and a UDP dial address",
		Expect:  Pass,
	}
}
