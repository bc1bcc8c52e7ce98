package catalog

import (
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/wire/reason"
)

// Layer is the layer of the stack a scenario exercises.
type Layer string

// The layers, in the order reports list them.
const (
	LayerTLS          Layer = "tls"
	LayerAuthority    Layer = "authority"
	LayerDiscovery    Layer = "discovery"
	LayerWatch        Layer = "watch"
	LayerRegistration Layer = "registration"
	LayerQUIC         Layer = "quic"
	LayerInvocation   Layer = "invocation"
	LayerResilience   Layer = "resilience"
)

// Layers lists every layer in report order.
var Layers = []Layer{LayerTLS, LayerAuthority, LayerDiscovery, LayerWatch, LayerRegistration, LayerQUIC, LayerInvocation, LayerResilience}

// Labels every scenario may carry.
const (
	// LabelProbe: driven by the harness's own probe, not the reference Pylon.
	LabelProbe = "probe"
	// LabelPylon: observes the reference Pylon.
	LabelPylon = "pylon"
	// LabelDeploys: deploys a variant (a Pylon with bad trust, say), so it costs a rollout.
	LabelDeploys = "deploys"
	// LabelFaults: runs under injected faults.
	LabelFaults = "faults"
	// LabelCrossRegion: crosses from one region to another.
	LabelCrossRegion = "cross-region"
)

// Isolated reports whether s may run beside other cases of its cell: its
// only actors are the harness's probes, under ids and nonces of their own,
// and its server-side checks read only what those ids did. It carries
// LabelProbe and none of LabelPylon (the reference Pylon's state is shared
// by the cell), LabelDeploys (a rollout changes what every case sees) or
// LabelFaults (a fault hits every case's traffic).
func (s Scenario) Isolated() bool {
	return s.HasLabel(LabelProbe) && !s.HasLabel(LabelPylon) && !s.HasLabel(LabelDeploys) && !s.HasLabel(LabelFaults)
}

// independentOfWorkload runs a scenario in StatefulSet cells only: what it
// shows does not depend on the Stargate workload kind, and each run of it
// costs a rollout.
var independentOfWorkload = []matrix.Workload{matrix.StatefulSet}

// terminatingTakes is about how long a case held inside a Stargate pod's
// termination window runs (Scenario.Takes), its control twin included:
// each starts the pod, holds it inside the window for the attempt and then
// ends the window (1.3 to 7.2 s each, measured on 2 cores).
const terminatingTakes = 2 * 8 * time.Second

// Requirements say which matrix cells a scenario applies to.
type Requirements struct {
	// Workloads it runs for; empty means every workload kind.
	Workloads []matrix.Workload
	// Trusts it runs for; empty means the scenario does not depend on
	// Pylon's trust source and runs in one trust cell per workload kind.
	Trusts []matrix.Trust
	// Discoveries it runs for; empty means EndpointSlice discovery only.
	// Only scenarios whose outcome depends on how Stargate finds its peers
	// (what it advertises, whom Pylon registers with) list matrix.DNS, so
	// the DNS cells hold few cases.
	Discoveries []matrix.Discovery
	// Profiles it runs for; empty means the secure profile only.
	Profiles []matrix.Profile
	// Features it needs of the components' build beyond its cell's
	// (fixtures/nvcfbuild): under a build without one, the case is
	// skipped as unsupported by this build, naming the missing flag.
	Features []nvcfbuild.Feature
}

// bothDiscoveries runs a scenario under EndpointSlice and DNS SRV discovery.
var bothDiscoveries = matrix.Discoveries

// Scenario is one entry of the catalogue.
type Scenario struct {
	// ID is stable, "<layer>/<name>", and used in test names.
	ID string
	// Layer is the layer under test.
	Layer Layer
	// Summary says in one line what is shown.
	Summary string
	// Labels select scenarios in `harness run --label`.
	Labels []string
	// Requires selects the cells.
	Requires Requirements
	// Expect is Pass or FailClosed(reason…).
	Expect Expectation
	// Control is the ID of the positive control (fail-closed scenarios only).
	Control string
	// Covers names the epic's requirements the scenario covers.
	Covers []Requirement
	// AssertsBaseline marks a positive scenario whose pass condition is
	// part of the cell's baseline (every Stargate ready and discoverable,
	// the base Pylon registered and tunnelled everywhere). A broken
	// baseline does not block it: the break is the verdict it exists to
	// give, with its own typed reason, when the system under test causes it.
	AssertsBaseline bool
	// Takes is about how long the scenario's case runs at time scale 1 when
	// that is far longer than a typical case's few seconds (a fault held for
	// 20 s, say); zero otherwise. Divide weighs cases by it.
	Takes time.Duration
}

// HasLabel reports whether s carries label l.
func (s Scenario) HasLabel(l string) bool { return slices.Contains(s.Labels, l) }

// Expectation is what a scenario must observe: Pass, or a refusal for one
// of the given typed reasons, by the given origin when it names one.
type Expectation struct {
	reasons []reason.Reason
	origins []reason.Origin
	// ifAbsent are reasons accepted, from the same origins, only when the
	// step proved that the pod the refused target names does not exist
	// (a *provenAbsent in the observed error; OrIfAbsent).
	ifAbsent []reason.Reason
}

// Pass expects the thing to work end to end.
var Pass = Expectation{}

// FailClosed expects a refusal for one of reasons (at least one).
func FailClosed(reasons ...reason.Reason) Expectation {
	return Expectation{reasons: slices.Clone(reasons)}
}

// From names who must refuse: one of origins. A refusal for the expected
// reason by another component (Stargate's invalid-registration for the
// router's invalid-authority, say, or the probe's own verification for the
// peer's alert) then fails the case.
func (e Expectation) From(origins ...reason.Origin) Expectation {
	e.origins = slices.Clone(origins)
	return e
}

// OrIfAbsent also accepts reasons, from the same origins, for a target
// the step proved names no pod: no Pod of that name in the region's
// namespace and no endpoint of the Stargate Service's EndpointSlices, before
// the attempt and after its refusal (provingAbsent). A component that
// knows only ready pods (NVCF's backend router and its QUIC relay) says
// not-ready for a pod that does not exist: still fail-closed, from the
// expected origin, but it proves the refusal's cause only when the pod
// provably is not there. Without that proof, or for a pod that exists,
// such a refusal fails the case.
func (e Expectation) OrIfAbsent(reasons ...reason.Reason) Expectation {
	e.ifAbsent = slices.Clone(reasons)
	return e
}

// IsPass reports whether e is Pass.
func (e Expectation) IsPass() bool { return len(e.reasons) == 0 }

// Reasons are the accepted refusal reasons (none for Pass).
func (e Expectation) Reasons() []reason.Reason { return slices.Clone(e.reasons) }

// Origins are the accepted origins (none: any).
func (e Expectation) Origins() []reason.Origin { return slices.Clone(e.origins) }

// IfAbsent are the reasons accepted only for a target proven to name no
// pod (OrIfAbsent).
func (e Expectation) IfAbsent() []reason.Reason { return slices.Clone(e.ifAbsent) }

// String renders "pass" or "fail-closed(r1|r2 from o1|o2)", with
// "; r3 if the pod is absent" for OrIfAbsent.
func (e Expectation) String() string {
	if e.IsPass() {
		return "pass"
	}
	rs := make([]string, len(e.reasons))
	for i, r := range e.reasons {
		rs[i] = string(r)
	}
	s := strings.Join(rs, "|")
	if len(e.origins) > 0 {
		os := make([]string, len(e.origins))
		for i, o := range e.origins {
			os[i] = string(o)
		}
		s += " from " + strings.Join(os, "|")
	}
	if len(e.ifAbsent) > 0 {
		rs := make([]string, len(e.ifAbsent))
		for i, r := range e.ifAbsent {
			rs[i] = string(r)
		}
		s += "; " + strings.Join(rs, "|") + " if the pod is absent"
	}
	return "fail-closed(" + s + ")"
}
