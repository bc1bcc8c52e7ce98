package scenarios

import "github.com/nvcf/conformance/harness/model/matrix"

// The discovery layer: WatchStargates advertises exactly the live pods'
// router-addressable identities, for StatefulSet and Deployment alike, by
// EndpointSlice and by DNS SRV discovery (the matrix's discovery axis).
// Steps: steps_discovery.go.

func discoveryIdentities() Scenario {
	return Scenario{
		ID: "discovery/identities", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		Summary:  "WatchStargates advertises exactly the live pods' identities in every region, never a dashed IP",
		Requires: Requirements{Discoveries: bothDiscoveries},
		Expect:   Pass,
		Try:      everyRegionAdvertisesLivePods,
	}
}

func discoverySRVDashedIP() Scenario {
	return Scenario{
		ID: "discovery/srv-dashed-ip", Layer: LayerDiscovery, Labels: []string{LabelProbe},
		Summary: "the cluster's CoreDNS answers SRV with dashed-IP targets for Deployment pods, " +
			"and Stargates discovering by DNS still advertise exactly the live pods' names",
		Requires: Requirements{Discoveries: []matrix.Discovery{matrix.DNS}},
		Expect:   Pass,
		Try:      srvTargetsResolvedToPodNames,
	}
}

func discoveryPodReplacement() Scenario {
	return Scenario{
		ID: "discovery/pod-replacement", Layer: LayerDiscovery, Labels: []string{LabelProbe, LabelPylon},
		Summary:  "after a Stargate pod is deleted its identity leaves, the replacement's arrives, and Pylon follows",
		Requires: Requirements{Discoveries: bothDiscoveries},
		Expect:   Pass,
		Try:      podReplacement,
	}
}
