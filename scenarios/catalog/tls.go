package catalog

import (
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/wire/reason"
)

// The tls layer: gRPC TLS on 50071, from the harness's probe (what the
// ingress serves and refuses) and from Pylon (what a client must refuse).
// Steps (package scenarios): steps_tls.go, steps_pylon.go.

// bundleTrusts are the trust sources that read a configured bundle.
var bundleTrusts = []matrix.Trust{matrix.Bundle, matrix.GRPCOverride}

func tlsVerifiedWatch() Scenario {
	return Scenario{
		ID: "tls/verified-watch", Layer: LayerTLS, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD3, DoD6, Defect3},
		Summary: "the probe watches every region through its ingress over TLS verified against the environment's root",
		Expect:  Pass,
	}
}

func tlsWrongRoot() Scenario {
	return Scenario{
		ID: "tls/wrong-root", Layer: LayerTLS, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD7, Defect3},
		Summary: "a client trusting only another root refuses the ingress",
		Expect:  FailClosed(reason.UnknownAuthority).From(reason.OriginProbe), Control: "tls/verified-watch",
	}
}

func tlsPlaintextToTLSPort() Scenario {
	return Scenario{
		ID: "tls/plaintext-to-tls-port", Layer: LayerTLS, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD3, DoD7},
		Summary: "the ingress refuses plaintext h2c on its TLS port",
		Expect:  FailClosed(reason.PlaintextToTLS).From(reason.OriginPeer), Control: "tls/verified-watch",
	}
}

func tlsPylonVerified() Scenario {
	return Scenario{
		ID: "tls/pylon-verified", Layer: LayerTLS, Labels: []string{LabelPylon},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD1, DoD2, Defect1, Defect2},
		Summary:         "the cell's Pylon watches and registers over verified TLS with its trust source",
		Requires:        Requirements{Trusts: matrix.Trusts, Profiles: matrix.Profiles},
		Expect:          Pass,
	}
}

func tlsWrongRootServer() Scenario {
	return Scenario{
		ID: "tls/wrong-root-server", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD1, DoD7, Defect1},
		Summary:  "Pylon refuses an ingress whose certificate chains to an untrusted root",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.UnknownAuthority).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsWrongHostname() Scenario {
	return Scenario{
		ID: "tls/wrong-hostname", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD3, DoD7, Defect1},
		Summary:  "Pylon refuses an ingress certificate that does not cover the dial hostname",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.HostnameMismatch).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsIngressCertIdentityOnly() Scenario {
	return Scenario{
		ID: "tls/ingress-cert-identity-only", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers: []Requirement{DoD3, DoD7, Defect1},
		Summary: "Pylon refuses an ingress certificate that covers the Stargate identities it sends as :authority " +
			"but not the dial hostname",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.HostnameMismatch).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsExpiredServerCert() Scenario {
	return Scenario{
		ID: "tls/expired-server-cert", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD1, Defect1},
		Summary:  "Pylon refuses an expired ingress certificate",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.Expired).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsSystemRootsLackServerCA() Scenario {
	return Scenario{
		ID: "tls/system-roots-lack-server-ca", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers: []Requirement{DoD2, Defect2},
		Summary: "with the server's root in neither the system store nor the custom bundle (an unrelated CA), " +
			"Pylon refuses Stargate: the system-plus-bundle cell passes through the system roots alone",
		Requires: Requirements{Workloads: independentOfWorkload, Trusts: []matrix.Trust{matrix.SystemPlusBundle}},
		Expect:   FailClosed(reason.UnknownAuthority).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsMissingTrust() Scenario {
	return Scenario{
		ID: "tls/missing-trust", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD2, DoD7, Defect2},
		Summary:  "a Pylon whose configured trust bundle does not exist refuses to start its connections",
		Requires: Requirements{Workloads: independentOfWorkload, Trusts: bundleTrusts},
		Expect:   FailClosed(reason.NoTrust).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsMalformedBundle() Scenario {
	return Scenario{
		ID: "tls/malformed-bundle", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD2, Defect2},
		Summary:  "a Pylon whose trust bundle is partially malformed rejects it as a whole",
		Requires: Requirements{Workloads: independentOfWorkload, Trusts: bundleTrusts},
		Expect:   FailClosed(reason.NoTrust).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsExplicitHTTPRefused() Scenario {
	return Scenario{
		ID: "tls/explicit-http-refused", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD1, DoD4},
		Summary:  "in the secure profile Pylon refuses an explicit http:// bootstrap address",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.InsecureRefused).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsSchemeLessBootstrapRefused() Scenario {
	return Scenario{
		ID: "tls/scheme-less-bootstrap-refused", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD4, Defect5},
		Summary:  "in the secure profile Pylon refuses a bootstrap address without a scheme, never reading it as plaintext",
		Requires: Requirements{Workloads: independentOfWorkload},
		Expect:   FailClosed(reason.SchemeRequired).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsEmptyBootstrapRefused() Scenario {
	return Scenario{
		ID: "tls/empty-bootstrap-refused", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD4},
		Summary:  "Pylon given no bootstrap address refuses to start, rather than fall back to a default or a plaintext one",
		Requires: Requirements{Workloads: independentOfWorkload},
		// The variable is set, with no value.
		Expect: FailClosed(reason.AddressRequired).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsIPLiteralBootstrap() Scenario {
	return Scenario{
		ID: "tls/ip-literal-bootstrap", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD3, DoD4},
		Summary:  "Pylon given its bootstrap ingress as an IP literal refuses the certificate, which names only the dial hosts",
		Requires: Requirements{Workloads: independentOfWorkload},
		// The same ingress, port and certificate as the control; only the
		// dial host differs. A Pylon that verified against anything but
		// the host it dialled (the :authority, a name it resolved) passes.
		Expect: FailClosed(reason.HostnameMismatch).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}

func tlsExplicitHTTPInsecureProfile() Scenario {
	return Scenario{
		ID: "tls/explicit-http-insecure-profile", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Covers:   []Requirement{DoD1},
		Summary:  "in the insecure profile Pylon accepts an explicit http:// address and dials plaintext, which the TLS port still refuses",
		Requires: Requirements{Profiles: []matrix.Profile{matrix.Insecure}},
		Expect:   FailClosed(reason.PlaintextToTLS).From(reason.OriginPylon), Control: "tls/pylon-verified",
	}
}
