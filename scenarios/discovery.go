package scenarios

// The discovery layer: WatchStargates advertises exactly the live pods'
// router-addressable identities, for StatefulSet and Deployment alike.
// Steps: steps_discovery.go.

func discoveryIdentities() Scenario {
	return Scenario{
		ID: "discovery/identities", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD5, DoD6, Defect4},
		Summary: "WatchStargates advertises exactly the live pods' identities in every region, never a dashed IP",
		Expect:  Pass,
		Try:     everyRegionAdvertisesLivePods,
	}
}

func discoveryNoDashedIdentity() Scenario {
	return Scenario{
		ID: "discovery/no-dashed-identity", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD5, Defect4},
		Summary: "no replica of any region advertises a dashed-IP identity or one naming no live pod (a subset suffices, so DNS-SRV discovery is held to it too)",
		Expect:  Pass,
		Try:     noReplicaAdvertisesDeadOrDashed,
	}
}

func discoveryPodReplacement() Scenario {
	return Scenario{
		ID: "discovery/pod-replacement", Layer: LayerDiscovery, Labels: []string{LabelProbe, LabelPylon},
		Covers:  []Requirement{DoD5, DoD6},
		Summary: "after a Stargate pod is deleted its identity leaves, the replacement's arrives, and Pylon follows",
		Expect:  Pass,
		Try:     podReplacement,
	}
}
