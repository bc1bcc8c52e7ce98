package catalog

import (
	"github.com/nvcf/conformance/wire/reason"
)

// The watch layer: cross-region discovery through watch_stargate_urls,
// with explicit schemes. Steps (package scenarios): steps_watch.go.

func watchCrossRegion() Scenario {
	return Scenario{
		ID: "watch/cross-region", Layer: LayerWatch, Labels: []string{LabelProbe, LabelCrossRegion},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD4, DoD6, Defect5},
		Summary:         "the bootstrap region hands out each remote region's https watch URL, and watching it yields that region's Stargates",
		Expect:          Pass,
	}
}

func watchSchemeLessRemoteRefused() Scenario {
	return Scenario{
		ID: "watch/scheme-less-remote-refused", Layer: LayerWatch, Labels: []string{LabelDeploys, LabelCrossRegion},
		Covers:   []Requirement{DoD4, Defect5},
		Summary:  "a Stargate given a scheme-less remote watch URL refuses it at start-up",
		Requires: Requirements{Workloads: independentOfWorkload},
		// The reference Stargate watches its remote regions itself and
		// refuses the URL at start-up (its termination message). NVCF's has
		// no remote-watch client: it hands the URL on to Pylons in its
		// WatchStargates answers, which is where the case reads what it did
		// with it (remoteWatchHandedOut): handed on scheme-less, it is red
		// as accepted, since NVCF's Pylon dials it in plaintext (defect 5).
		Expect: FailClosed(reason.SchemeRequired).From(reason.OriginStargate), Control: "watch/cross-region",
	}
}

func watchIPLiteralRemote() Scenario {
	return Scenario{
		ID: "watch/ip-literal-remote", Layer: LayerWatch, Labels: []string{LabelDeploys, LabelCrossRegion},
		Covers:   []Requirement{DoD3, DoD4},
		Summary:  "a Stargate given the remote region's ingress as an IP literal refuses its certificate, which names only the dial hosts",
		Requires: Requirements{Workloads: independentOfWorkload},
		// The reference Stargate dials its remote regions itself; NVCF's
		// has no remote-watch client (it hands the URL on to the Pylons,
		// see watch/scheme-less-remote-refused), so on it the case is NOT
		// PROVEN: tls/ip-literal-bootstrap covers the Pylons' side.
		Expect: FailClosed(reason.HostnameMismatch).From(reason.OriginStargate), Control: "watch/cross-region",
	}
}

func watchEmptyRemoteRefused() Scenario {
	return Scenario{
		ID: "watch/empty-remote-refused", Layer: LayerWatch, Labels: []string{LabelDeploys, LabelCrossRegion},
		Covers:   []Requirement{DoD4},
		Summary:  "a Stargate given an empty remote watch URL refuses it at start-up, rather than drop the region silently",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.AddressRequired).From(reason.OriginStargate), Control: "watch/cross-region",
	}
}

func watchHTTPToTLSRemoteRefused() Scenario {
	return Scenario{
		ID: "watch/http-to-tls-remote-refused", Layer: LayerWatch, Labels: []string{LabelDeploys, LabelCrossRegion},
		Covers:   []Requirement{DoD4, DoD7, Defect5},
		Summary:  "a Stargate given an http:// remote watch URL in the secure profile refuses it",
		Requires: Requirements{Workloads: independentOfWorkload},
		// On NVCF's Stargate, as watch/scheme-less-remote-refused: an
		// http:// URL it hands on is red as accepted.
		Expect: FailClosed(reason.InsecureRefused).From(reason.OriginStargate), Control: "watch/cross-region",
	}
}
