package catalog

import "github.com/nvcf/conformance/model/matrix"

// The discovery layer: WatchStargates advertises exactly the live pods'
// router-addressable identities, for StatefulSet and Deployment alike, by
// EndpointSlice and by DNS SRV discovery (the matrix's discovery axis).
// Steps (package scenarios): steps_discovery.go.

func discoveryIdentities() Scenario {
	return Scenario{
		ID: "discovery/identities", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD5, DoD6, Defect4},
		Summary:         "WatchStargates advertises exactly the live pods' identities in every region, never a dashed IP",
		Requires:        Requirements{Discoveries: bothDiscoveries},
		Expect:          Pass,
	}
}

func discoverySRVDashedIP() Scenario {
	return Scenario{
		ID: "discovery/srv-dashed-ip", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		Covers: []Requirement{DoD5, Defect4},
		Summary: "the cluster's CoreDNS answers SRV with dashed-IP targets for Deployment pods, " +
			"and Stargates discovering by DNS still advertise exactly the live pods' names",
		Requires: Requirements{Discoveries: []matrix.Discovery{matrix.DNS}},
		Expect:   Pass,
	}
}

func discoveryNoDashedIdentity() Scenario {
	return Scenario{
		ID: "discovery/no-dashed-identity", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD5, Defect4},
		Summary:         "no replica of any region advertises a dashed-IP identity or one naming no live pod (a subset suffices, so DNS-SRV discovery is held to it too)",
		Requires:        Requirements{Discoveries: bothDiscoveries},
		Expect:          Pass,
	}
}

func discoveryPodReplacement() Scenario {
	return Scenario{
		ID: "discovery/pod-replacement", Layer: LayerDiscovery, Labels: []string{LabelProbe, LabelPylon},
		Covers:   []Requirement{DoD5, DoD6},
		Summary:  "after a Stargate pod is deleted its identity leaves, the replacement's arrives, and Pylon follows",
		Requires: Requirements{Discoveries: bothDiscoveries},
		Expect:   Pass,
	}
}
