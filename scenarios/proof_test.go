package scenarios

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/scenarios/catalog"
)

func activeOn(region, pod string, active map[string]float64, listed ...string) held {
	return held{Region: region, Pod: pod, Ready: true, Source: ProofMetrics, Heartbeat: defaultHeartbeat, Active: active, Listed: listed}
}

func TestByMetrics(t *testing.T) {
	require.False(t, byMetrics(&catalog.RunConfig{}), "the reference Stargate: /status")
	require.True(t, byMetrics(&catalog.RunConfig{Real: []string{"stargate"}}), "a real Stargate: its /metrics")
	require.False(t, byMetrics(&catalog.RunConfig{Real: []string{"pylon", "router"}}), "a real Pylon beside the reference Stargate")
	require.True(t, byMetrics(&catalog.RunConfig{Proof: catalog.ProofFromMetrics}), "the metrics path, on the reference Stargate")
	require.False(t, byMetrics(&catalog.RunConfig{Real: []string{"stargate"}, Proof: catalog.ProofFromStatus}))
	require.False(t, byMetrics(nil))
}

// On a real Stargate's sources a refusal is proven by the id's own model
// being served nowhere: not even where its registration stands, since an
// active registration needs its tunnel.
func TestAbsenceFromMetrics(t *testing.T) {
	id := "tunnel-1"
	before := []held{activeOn("region-a", "stargate-0", map[string]float64{"echo": 1}), activeOn("region-a", "stargate-1", nil)}
	a := absence{id: id, model: probeModel(id), before: before, registeredOn: "region-a/stargate-0"}
	require.Empty(t, a.violations(before))
	now := []held{
		activeOn("region-a", "stargate-0", map[string]float64{"echo": 1, probeModel(id): 1}),
		activeOn("region-a", "stargate-1", nil, probeModel(id)),
	}
	require.Equal(t, []string{
		"Stargate region-a/stargate-0 serves model probe-tunnel-1 of tunnel-1 (metrics: an active registration with its tunnel up)",
		"Stargate region-a/stargate-1 serves model probe-tunnel-1 of tunnel-1 (discovery: an active registration with its tunnel up)",
	}, a.violations(now))

	cs := a.claims(ProofMetrics)
	require.Equal(t, ProofNone, weakest(cs), "accepted handshakes are not exposed")
	require.Equal(t, ProofMetrics, cs[0].level)
	routed := absence{id: id, model: probeModel(id), routed: true}
	require.Len(t, routed.claims(ProofMetrics), 3)
	require.Equal(t, ProofStatus, weakest(routed.claims(ProofStatus)))
}

func TestPresenceFromMetrics(t *testing.T) {
	id := "tunnel-2"
	p := presence{id: id, model: probeModel(id), on: []string{"region-a/stargate-1"}}
	right := []held{activeOn("region-a", "stargate-0", nil), activeOn("region-a", "stargate-1", map[string]float64{probeModel(id): 1})}
	require.NoError(t, p.mismatch(right, p.on))
	wrong := []held{activeOn("region-a", "stargate-0", map[string]float64{probeModel(id): 1}), activeOn("region-a", "stargate-1", nil)}
	require.ErrorContains(t, p.mismatch(wrong, p.on), "replicas serving model probe-tunnel-2 of tunnel-2")

	// The probe's tunnel, held open and answering the health checks, shows
	// as its model's active server: the metrics prove it, with the same
	// comparison (exactly the named replica).
	tp := presence{id: id, model: probeModel(id), on: []string{"region-a/stargate-1"}, tunnel: true}
	require.Equal(t, ProofMetrics, weakest(tp.claims(ProofMetrics)))
	require.NoError(t, tp.mismatch(right, tp.on))
	require.Error(t, tp.mismatch(wrong, tp.on))
	require.Error(t, tp.mismatch([]held{activeOn("region-a", "stargate-0", nil), activeOn("region-a", "stargate-1", nil)}, tp.on),
		"a tunnel that never turned the registration active is not proven")
	// A bare registration (no tunnel), a Pylon's id without its model:
	// nothing proves them.
	require.Equal(t, ProofNone, weakest(presence{id: id, model: probeModel(id)}.claims(ProofMetrics)))
	require.Equal(t, ProofNone, weakest(presence{id: "echo-pylon", tunnel: true}.claims(ProofMetrics)))
	require.Equal(t, ProofStatus, weakest(presence{id: "echo-pylon"}.claims(ProofStatus)))

	// A Pylon variant: one more active server of the shared model than before, on every replica.
	base := []held{activeOn("region-a", "stargate-0", map[string]float64{"echo": 1}), activeOn("region-a", "stargate-1", map[string]float64{"echo": 1})}
	v := presence{id: "pylon-v", shared: "echo", base: base}
	require.Equal(t, ProofMetrics, weakest(v.claims(ProofMetrics)))
	want := []string{"region-a/stargate-0", "region-a/stargate-1"}
	require.ErrorContains(t, v.mismatch(base, want), "one more active server of model echo")
	more := []held{activeOn("region-a", "stargate-0", map[string]float64{"echo": 2}), activeOn("region-a", "stargate-1", map[string]float64{"echo": 2})}
	require.NoError(t, v.mismatch(more, want))
	// Without a base, by model only.
	require.NoError(t, presence{id: "pylon", shared: "echo"}.mismatch(base, want))
}

// A refused Pylon variant may add no active server of its shared model.
func TestSharedModelAbsenceFromMetrics(t *testing.T) {
	before := []held{activeOn("region-a", "stargate-0", map[string]float64{"echo": 1})}
	a := absence{id: "pylon-v", shared: "echo", before: before}
	require.Equal(t, ProofNone, weakest(a.claims(ProofMetrics)), "handshakes stay unproven")
	require.Equal(t, ProofMetrics, a.claims(ProofMetrics)[0].level)
	require.Empty(t, a.violations(before))
	require.Empty(t, a.violations([]held{activeOn("region-a", "stargate-0", nil)}), "the base Pylon gone is no breach")
	require.Equal(t, []string{"Stargate region-a/stargate-0 has 1 more active server(s) of model echo (which pylon-v shares) than before"},
		a.violations([]held{activeOn("region-a", "stargate-0", map[string]float64{"echo": 2})}))
}

// What nothing proves is said in the evidence and the case's result, and
// the check does not sweep: never a silent pass.
func TestUnprovableChecksSaySo(t *testing.T) {
	dir := t.TempDir()
	e := &Env{World: &World{Config: &catalog.RunConfig{Real: []string{"stargate"}}, Log: slog.New(slog.DiscardHandler)}, Evidence: dir}
	before := []held{activeOn("region-a", "stargate-0", nil)}
	ctx := context.Background()
	require.NoError(t, e.heldNowhere(ctx, absence{id: "pylon-variant", before: before}))
	require.NoError(t, e.heldExactlyOn(ctx, presence{id: "pylon-variant"}))
	data, err := os.ReadFile(filepath.Join(dir, "server-side.txt"))
	require.NoError(t, err)
	require.Contains(t, string(data), "proof:   none")
	require.Contains(t, string(data), "NOT PROVEN: nothing this Stargate exposes can prove it")
	require.Contains(t, string(data), "shares its models")
	proofs := e.Proofs()
	require.Len(t, proofs, 2)
	for _, p := range proofs {
		require.Regexp(t, `^none: `, p)
	}
}

// A claim nothing can prove is no verdict: ErrNotProven, which the run
// reports as a skip (caseRun.skipWithoutSeam),
// with its reason in the message; never a pass, never a typed refusal.
func TestProofNotProvenIsASkip(t *testing.T) {
	err := fmt.Errorf("step: %w", notProven("which Stargate of region-b holds x", "a real Stargate names no registrations by id"))
	require.ErrorIs(t, err, ErrNotProven)
	require.NotErrorIs(t, err, faults.ErrNoSeam, "its own sentinel, not a fault's")
	require.Contains(t, err.Error(), "NOT PROVEN: which Stargate of region-b holds x: a real Stargate names no registrations by id")
	require.Empty(t, refusalsIn(err))
	require.Error(t, judge(catalog.Pass, err))
	_, err = (&Env{World: &World{Config: &catalog.RunConfig{Real: []string{"stargate"}}}}).RegisteredOn(context.Background(), "region-b", "x")
	require.ErrorIs(t, err, ErrNotProven)
}
