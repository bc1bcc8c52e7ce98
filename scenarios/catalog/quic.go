package catalog

import (
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/wire/reason"
)

// The quic layer: the reverse tunnel on UDP 50072, authenticated. Steps (package scenarios):
// steps_quic.go.

func quicTunnelUp() Scenario {
	return Scenario{
		ID: "quic/tunnel-up", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6, DoD8},
		Summary: "a rogue Pylon registered with reverse tunnel brings the tunnel up with SNI = its Stargate's identity, the token and its client certificate",
		Expect:  Pass,
	}
}

func quicBadToken() Scenario {
	return Scenario{
		ID: "quic/bad-token", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a tunnel handshake with a wrong token is refused",
		Expect:  FailClosed(reason.BadToken).From(reason.OriginStargate), Control: "quic/tunnel-up",
	}
}

func quicUnregisteredTunnel() Scenario {
	return Scenario{
		ID: "quic/unregistered-tunnel", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a tunnel handshake whose inference server id holds no registration is refused by the Stargate it names",
		Expect:  FailClosed(reason.Unregistered).From(reason.OriginStargate), Control: "quic/tunnel-up",
	}
}

func quicMissingClientCert() Scenario {
	return Scenario{
		ID: "quic/missing-client-cert", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "a tunnel without a client certificate is refused",
		Expect:  FailClosed(reason.ClientCertRequired).From(reason.OriginPeer), Control: "quic/tunnel-up",
		Requires: Requirements{Features: []nvcfbuild.Feature{nvcfbuild.TunnelClientCert}},
	}
}

func quicUntrustedClientCert() Scenario {
	return Scenario{
		ID: "quic/untrusted-client-cert", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6, DoD7},
		Summary: "a tunnel with a client certificate from an untrusted root is refused",
		Expect:  FailClosed(reason.UntrustedClientCert).From(reason.OriginPeer), Control: "quic/tunnel-up",
		Requires: Requirements{Features: []nvcfbuild.Feature{nvcfbuild.TunnelClientCert}},
	}
}

func quicWrongServerRoot() Scenario {
	return Scenario{
		ID: "quic/wrong-server-root", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD7, DoD8},
		Summary: "a Pylon trusting another root refuses the tunnel's server",
		Expect:  FailClosed(reason.UnknownAuthority).From(reason.OriginProbe), Control: "quic/tunnel-up",
	}
}

func quicUnknownSNI() Scenario {
	return Scenario{
		ID: "quic/unknown-sni", Layer: LayerQUIC, Labels: []string{LabelProbe},
		Covers:  []Requirement{DoD6},
		Summary: "the relay refuses an SNI naming no ready Stargate",
		// The reference relay refuses in the TLS handshake (alert 112, the
		// peer's); a real router's relay closes the connection after it
		// with a text of its own, "target stargate not ready": it knows only
		// ready pods (docs/reasons.md). That not-ready counts only with the
		// step's proof that no pod of the SNI's name exists (absent.go).
		Expect: FailClosed(reason.UnknownSNI).From(reason.OriginPeer, reason.OriginQUICRelay).OrIfAbsent(reason.NotReady), Control: "quic/tunnel-up",
	}
}

func quicNotReady() Scenario {
	return Scenario{
		ID: "quic/not-ready", Layer: LayerQUIC, Labels: []string{LabelProbe, LabelDeploys},
		Covers:  []Requirement{DoD6},
		Summary: "the relay refuses an SNI naming a Stargate pod that runs but is not ready",
		// A real router's relay says not-ready where the reference one
		// knows no ready pod by that name (docs/reasons.md).
		Expect: FailClosed(reason.UnknownSNI, reason.NotReady).From(reason.OriginPeer, reason.OriginQUICRelay), Control: "quic/tunnel-up",
	}
}

func quicTerminating() Scenario {
	return Scenario{
		ID: "quic/terminating", Layer: LayerQUIC, Labels: []string{LabelProbe, LabelDeploys},
		Covers:  []Requirement{DoD6},
		Summary: "the relay refuses an SNI naming a Stargate pod inside its termination window (deleted, still serving, listed serving and terminating)",
		// The terminating pod as in authority/terminating
		// (WithTerminatingStargate). The relay's refusal is as for a
		// not-ready pod: a real router's relay knows no ready pod by that
		// name (docs/reasons.md). A relay that read serving as ready
		// forwards the tunnel to the terminating Stargate, which holds no
		// registration of its id and refuses it itself (unregistered, the
		// wrong origin): the case fails either way.
		Expect: FailClosed(reason.UnknownSNI, reason.NotReady).From(reason.OriginPeer, reason.OriginQUICRelay), Control: "quic/tunnel-up",
		Takes: terminatingTakes,
	}
}

func quicPylonTunnel() Scenario {
	return Scenario{
		ID: "quic/pylon-tunnel", Layer: LayerQUIC, Labels: []string{LabelPylon},
		AssertsBaseline: true,
		Covers:          []Requirement{DoD6, DoD8},
		Summary:         "the cell's Pylon holds a connected reverse tunnel through every region's QUIC relay",
		// The tunnel's trust (STARGATE_TLS_CERT_PATH plus the system roots)
		// differs per trust source, system-plus-bundle's unrelated CA included.
		Requires: Requirements{Trusts: matrix.Trusts},
		Expect:   Pass,
	}
}
