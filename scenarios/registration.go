package scenarios

// The registration layer: Pylon registers with every advertised Stargate
// in every region, over explicit https:// addresses. Steps:
// steps_registration.go.

func registrationEveryStargateEveryRegion() Scenario {
	return Scenario{
		ID: "registration/every-stargate-every-region", Layer: LayerRegistration, Labels: []string{LabelPylon, LabelCrossRegion},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD1, DoD6},
		Summary:         "the cell's Pylon holds a healthy registration with every live Stargate of every region",
		Requires:        Requirements{Discoveries: bothDiscoveries},
		Expect:          Pass,
		Try:             pylonRegisteredEverywhere(waitConverge),
	}
}

func registrationExplicitHTTPS() Scenario {
	return Scenario{
		ID: "registration/explicit-https", Layer: LayerRegistration, Labels: []string{LabelProbe},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD4},
		Summary:         "the bootstrap address and every advertised gRPC dial address are explicit https:// URIs",
		Expect:          Pass,
		Try:             explicitHTTPS,
	}
}

func registrationRogueAck() Scenario {
	return Scenario{
		ID: "registration/rogue-ack", Layer: LayerRegistration, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a rogue Pylon's registration asking for a reverse tunnel is acknowledged with the named Stargate's identity as tunnel target and a UDP dial address",
		Expect:  Pass,
		Try:     rogueAck,
	}
}
