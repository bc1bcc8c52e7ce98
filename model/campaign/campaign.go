// Package campaign is the data of a fault campaign: a schedule of faults
// drawn from a seed (Generate), the invariants checked while it runs, and
// what a run of it found (Result). It is pure data and pure functions: the
// suite runs a schedule (scenarios' campaign engine), the runner reports it
// and shrinks a violating schedule (Shrink). The same seed and options give
// the same schedule, byte for byte, so a schedule is replayed from its seed
// or from its JSON file.
package campaign

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Version is the schedule file format's; Read refuses another.
const Version = 1

// Kind is one fault of the campaign's menu. Each maps to one of the fault
// injector's actions (or a Kubernetes operation) on the topology's
// clusters; the engine builds it.
type Kind string

// The menu.
const (
	// Partition drops everything between Target's two clusters ("workers->region-a").
	Partition Kind = "partition"
	// QUICLoss loses and delays datagrams between the workers and a
	// region's QUIC relay (Target: "workers->region-a").
	QUICLoss Kind = "quic-loss"
	// QUICDelay delays them (with jitter) without loss.
	QUICDelay Kind = "quic-delay"
	// QUICBlackhole drops every datagram on that path.
	QUICBlackhole Kind = "quic-blackhole"
	// TCP puts latency and connection resets on the path from the workers
	// to a region's gRPC ingress.
	TCP Kind = "tcp"
	// StargateKill kills one Stargate pod's processes of a region (Target: region).
	StargateKill Kind = "stargate-kill"
	// PylonKill kills the campaign Pylons' processes (Target: workers cluster).
	PylonKill Kind = "pylon-kill"
	// PylonLeave deletes one campaign Pylon for the fault's duration and
	// brings it back after (Target: workers cluster): what I4 watches.
	PylonLeave Kind = "pylon-leave"
	// Rollout restarts a region's Stargates as a rolling update (Target: region).
	Rollout Kind = "rollout"
	// ScaleDown scales a region's Stargates to one replica for the
	// fault's duration and back after (Target: region).
	ScaleDown Kind = "scale-down"
	// CertRotate rotates a region's ingress certificate to another good
	// one for the duration, and back after (Target: region).
	CertRotate Kind = "cert-rotate"
	// DNSSpoof answers a region's gRPC name with another region's address
	// to the workers' pods (Target: "workers->region-a").
	DNSSpoof Kind = "dns-spoof"
	// Downgrade answers the workers' TLS clients of a region's ingress in
	// plaintext (Target: "workers->region-a").
	Downgrade Kind = "downgrade"
)

// Kinds is the whole menu, in a fixed order (Generate draws from it).
var Kinds = []Kind{Partition, QUICLoss, QUICDelay, QUICBlackhole, TCP, StargateKill, PylonKill, PylonLeave, Rollout, ScaleDown, CertRotate, DNSSpoof, Downgrade}

// ParseKinds reads a comma list of kinds ("" or "all": every kind).
func ParseKinds(s string) ([]Kind, error) {
	if s == "" || s == "all" {
		return Kinds, nil
	}
	var out []Kind
	for _, w := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(w))
		if !k.Valid() {
			return nil, fmt.Errorf("unknown fault kind %q (kinds: %s)", k, KindNames())
		}
		out = append(out, k)
	}
	return out, nil
}

// KindNames is the menu as a comma list, for help texts and errors.
func KindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Valid reports whether k is on the menu.
func (k Kind) Valid() bool {
	for _, m := range Kinds {
		if m == k {
			return true
		}
	}
	return false
}

// OnPath says the kind's Target is a path "FROM->TO"; else it is one cluster.
func (k Kind) OnPath() bool {
	switch k {
	case Partition, QUICLoss, QUICDelay, QUICBlackhole, TCP, DNSSpoof, Downgrade:
		return true
	}
	return false
}

// Hostile says the fault attacks the channel (a wrong address, a
// plaintext answer): while it is on, refusals are the expected outcome and
// any acceptance through it is an I2 violation.
func (k Kind) Hostile() bool { return k == DNSSpoof || k == Downgrade }

// Span is a duration that reads and writes as text in JSON ("1m30s").
type Span time.Duration

// D is the span as a time.Duration.
func (s Span) D() time.Duration { return time.Duration(s) }

func (s Span) String() string { return time.Duration(s).String() }

// MarshalJSON writes the span as its String.
func (s Span) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a Go duration text ("90s", "1m30s").
func (s *Span) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("a duration must be text such as \"90s\": %w", err)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	*s = Span(d)
	return nil
}

// Fault is one fault of a schedule.
type Fault struct {
	// ID numbers the fault in its schedule (1, 2, …); a shrunk schedule
	// keeps the ids of the faults it kept.
	ID   int  `json:"id"`
	Kind Kind `json:"kind"`
	// Target names clusters of the topology: "FROM->TO" for a path kind,
	// a cluster's name else.
	Target string `json:"target"`
	// Params tune the fault (loss=0.3, delay=150ms…), as the engine reads them.
	Params map[string]string `json:"params,omitempty"`
	// Start is the offset from the campaign's start; Duration how long it stays.
	Start    Span `json:"start"`
	Duration Span `json:"duration"`
}

// End is when the fault heals, as an offset from the campaign's start.
func (f Fault) End() Span { return f.Start + f.Duration }

// String is one line: "#3 partition workers->region-a at 12s for 20s (k=v…)".
func (f Fault) String() string {
	s := fmt.Sprintf("#%d %s %s at %s for %s", f.ID, f.Kind, f.Target, f.Start, f.Duration)
	if len(f.Params) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(f.Params)) {
			kv = append(kv, k+"="+f.Params[k])
		}
		s += " (" + strings.Join(kv, " ") + ")"
	}
	return s
}

// Schedule is a campaign: faults over a window, then a settle period in
// which everything must converge (I1).
type Schedule struct {
	Version int `json:"version"`
	// Seed drew the schedule (0 for one written by hand).
	Seed int64 `json:"seed"`
	// Topology is the topology's name the targets belong to.
	Topology string `json:"topology"`
	// Duration is the fault window; no fault ends after it.
	Duration Span `json:"duration"`
	// Settle bounds convergence: once every fault has healed, every live
	// Pylon must hold its registrations (and tunnels) within it (I1).
	Settle Span `json:"settle"`
	// Faults are in start order.
	Faults []Fault `json:"faults"`
}

// Invariant names one property checked all through a campaign.
type Invariant string

// The invariants.
const (
	// Convergence: once faults heal, every live Pylon holds a registration
	// (and a tunnel where asked) with every live Stargate of every region,
	// within the schedule's Settle.
	Convergence Invariant = "I1-convergence"
	// FailClosed: no registration, watch or tunnel is ever accepted over an
	// unverified, downgraded or wrongly addressed channel; the bad-trust
	// Pylons never register.
	FailClosed Invariant = "I2-fail-closed"
	// Invocations: each invocation succeeds, or fails with a typed reason
	// while a fault explains it; none is answered by the wrong worker,
	// none outlives its deadline.
	Invocations Invariant = "I3-invocations"
	// NoLeaks: a gone Pylon's registrations and tunnels disappear within
	// the idle timeout; the Stargates' counts return to their baseline.
	NoLeaks Invariant = "I4-no-leaks"
)

// Invariants lists them in report order.
var Invariants = []Invariant{Convergence, FailClosed, Invocations, NoLeaks}

// ParseInvariant reads an invariant by its full name or its "I1".."I4" prefix.
func ParseInvariant(s string) (Invariant, error) {
	for _, inv := range Invariants {
		if string(inv) == s || strings.HasPrefix(string(inv), s+"-") {
			return inv, nil
		}
	}
	return "", fmt.Errorf("unknown invariant %q (want I1, I2, I3 or I4)", s)
}

// Violation is one breach of an invariant, with its evidence.
type Violation struct {
	Invariant Invariant `json:"invariant"`
	// At is the offset from the campaign's start.
	At Span `json:"at"`
	// What says what was wrong, in one line.
	What string `json:"what"`
	// Evidence is what the check saw (server-side holdings, a probe's answer).
	Evidence string `json:"evidence,omitempty"`
	// Active are the ids of the faults on at the time.
	Active []int `json:"active,omitempty"`
}

// Sample is one evaluation of an invariant, for the timeline.
type Sample struct {
	At        Span      `json:"at"`
	Invariant Invariant `json:"invariant"`
	OK        bool      `json:"ok"`
	// Note is a short account ("6/6 Stargates hold 3 Pylons", "invoke 200").
	Note string `json:"note,omitempty"`
}

// Applied is what became of one scheduled fault.
type Applied struct {
	ID int `json:"id"`
	// Injected and Healed are offsets from the start; Healed is zero when
	// the fault never healed (the campaign was cut).
	Injected Span `json:"injected"`
	Healed   Span `json:"healed"`
	// Effect is what the injector saw it do ("dropped 212 packets").
	Effect string `json:"effect,omitempty"`
	// Error is a failure to inject or to undo it.
	Error string `json:"error,omitempty"`
}

// Scale is what a campaign with many Pylons measured.
type Scale struct {
	Pylons int `json:"pylons"`
	// ColdRegistration is the time from applying the Pylons to every one
	// being held by every Stargate (zero: never within the bound).
	ColdRegistration Span `json:"coldRegistration"`
	// Reconverge is the time from a rollout of every region's Stargates to
	// every Pylon being held again by every new Stargate.
	Reconverge Span `json:"reconverge"`
	// RegistersPerSecond is the RegisterInferenceServer calls per second
	// the Stargates received, all together, during the cold start.
	RegistersPerSecond float64 `json:"registersPerSecond"`
	// Refusals counts typed refusals the Pylons reported during the cold start.
	Refusals int `json:"refusals"`
	// Memory is the peak resident memory of each role's pods while the
	// campaign ran (sampled on the host, where the provider runs pods as
	// processes; empty elsewhere).
	Memory []RoleMemory `json:"memory,omitempty"`
	// Notes say what saturated first, as measured.
	Notes []string `json:"notes,omitempty"`
}

// RoleMemory is one role's peak memory.
type RoleMemory struct {
	Role string `json:"role"`
	// Processes is how many of its processes ran at the peak.
	Processes int `json:"processes"`
	// PeakTotal is the largest sum of their RSS at one sample, PeakProcess
	// the largest RSS of one process, in bytes.
	PeakTotal   int64 `json:"peakTotal"`
	PeakProcess int64 `json:"peakProcess"`
}

// Result is what one run of a schedule found.
type Result struct {
	Schedule Schedule `json:"schedule"`
	// Started is the wall-clock start; offsets count from it.
	Started time.Time `json:"started"`
	// Ended is the offset at which checking stopped.
	Ended Span `json:"ended"`
	// Pylons and BadPylons are the campaign Pylons: good ones that must
	// converge, bad-trust ones that must never register.
	Pylons    []string  `json:"pylons"`
	BadPylons []string  `json:"badPylons"`
	Applied   []Applied `json:"applied"`
	Samples   []Sample  `json:"samples"`
	// Violations are in time order; the first of each invariant decides.
	Violations []Violation `json:"violations"`
	// Checks counts the evaluations of each invariant: one with no check
	// proves nothing, and is reported as an error, not a pass.
	Checks map[Invariant]int `json:"checks"`
	// Error is an engine failure (could not deploy, could not read the
	// Stargates): no verdict.
	Error string `json:"error,omitempty"`
	// Scale is set when the campaign measured scale.
	Scale *Scale `json:"scale,omitempty"`
}

// Violated lists the invariants with a violation, in report order.
func (r Result) Violated() []Invariant {
	var out []Invariant
	for _, inv := range Invariants {
		if _, ok := r.First(inv); ok {
			out = append(out, inv)
		}
	}
	return out
}

// First is an invariant's first violation.
func (r Result) First(inv Invariant) (Violation, bool) {
	for _, v := range r.Violations {
		if v.Invariant == inv {
			return v, true
		}
	}
	return Violation{}, false
}

// OK says every invariant was checked and held, and the engine ran through.
func (r Result) OK() bool {
	if r.Error != "" || len(r.Violations) > 0 {
		return false
	}
	for _, inv := range Invariants {
		if r.Checks[inv] == 0 {
			return false
		}
	}
	return true
}
