package catalog

import "github.com/nvcf/conformance/reports"

// Requirement is one requirement of the epic that started this project: a
// definition-of-done item or one of the defects of its failure chain. Each
// scenario names those it covers (Scenario.Covers); the reports show every
// requirement with its scenarios and their results.
type Requirement string

// The epic's definition of done.
const (
	// DoD1: HTTPS watch and registration channels use verified TLS; plaintext only for explicit http:// endpoints.
	DoD1 Requirement = "dod-1"
	// DoD2: public/system roots and the merged trust bundle, without an insecure fallback.
	DoD2 Requirement = "dod-2"
	// DoD3: worker-reachable TLS/h2 on 50071 with a certificate covering the dial hostname, h2c to the router.
	DoD3 Requirement = "dod-3"
	// DoD4: the bootstrap address and every WatchStargates dial advertisement are explicit secure URIs.
	DoD4 Requirement = "dod-4"
	// DoD5: StatefulSet and Deployment discovery first-class, only router-addressable identities.
	DoD5 Requirement = "dod-5"
	// DoD6: multi-cluster tests cover TLS, authority, discovery, watch, registration, reverse QUIC, invocation.
	DoD6 Requirement = "dod-6"
	// DoD7: wrong-root, wrong-hostname, missing-trust, plaintext-to-TLS and invalid authority fail closed.
	DoD7 Requirement = "dod-7"
	// DoD8: gRPC TLS on 50071 is distinct from reverse-QUIC TLS on 50072.
	DoD8 Requirement = "dod-8"
)

// The epic's defects.
const (
	// Defect1: HTTPS Stargate gRPC endpoints dialled without client TLS.
	Defect1 Requirement = "defect-1"
	// Defect2: Pylon gRPC ignores the system-plus-custom trust bundle.
	Defect2 Requirement = "defect-2"
	// Defect3: no TLS/h2 termination and certificate contract on 50071.
	Defect3 Requirement = "defect-3"
	// Defect4: Deployment-backed SRV discovery yields a dashed-IP authority.
	Defect4 Requirement = "defect-4"
	// Defect5: scheme-less cross-region watch addresses become plaintext HTTP.
	Defect5 Requirement = "defect-5"
)

// EpicRequirements lists every requirement with its title, in report order.
func EpicRequirements() []reports.Requirement {
	return []reports.Requirement{
		{ID: string(DoD1), Title: "HTTPS Pylon watch and registration channels use verified TLS; plaintext only for explicit HTTP endpoints"},
		{ID: string(DoD2), Title: "public/system roots and the --tls-cert-path / STARGATE_TLS_CERT_PATH merged trust bundle, without an insecure fallback"},
		{ID: string(DoD3), Title: "worker-reachable TLS/h2 on port 50071 with a certificate covering the dial hostname and h2c forwarding to the backend router"},
		{ID: string(DoD4), Title: "the bootstrap address and all WatchStargates dial advertisements are explicit secure URIs in secure profiles"},
		{ID: string(DoD5), Title: "StatefulSet- and Deployment-backed discovery both first-class, emitting only router-addressable Stargate identities"},
		{ID: string(DoD6), Title: "multi-cluster tests independently cover TLS, authority routing, Deployment discovery, cross-region watch, registration, reverse QUIC and invocation"},
		{ID: string(DoD7), Title: "wrong-root, wrong-hostname, missing-trust, plaintext-to-TLS and invalid-authority cases fail closed"},
		{ID: string(DoD8), Title: "gRPC TLS on port 50071 is distinct from reverse-QUIC TLS on port 50072"},
		{ID: string(Defect1), Title: "defect: HTTPS Stargate gRPC dial endpoints are constructed without client TLS"},
		{ID: string(Defect2), Title: "defect: Pylon gRPC does not reuse the system-plus-custom trust bundle"},
		{ID: string(Defect3), Title: "defect: self-managed registration on port 50071 has no TLS/h2 termination and certificate contract"},
		{ID: string(Defect4), Title: "defect: Deployment-backed SRV discovery produces an unroutable dashed-IP authority"},
		{ID: string(Defect5), Title: "defect: scheme-less cross-region watch addresses normalize to plaintext HTTP"},
	}
}
