package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/scenarios/catalog"
)

func sp(d time.Duration) campaign.Span { return campaign.Span(d) }

// An invocation's failure is explained by a fault that was on during it,
// or healed less than the settle period before it began; not by one that
// healed long before, nor by one that came after.
func TestAFailureIsExplainedOnlyByFaultsNearIt(t *testing.T) {
	c := &campaignRun{s: campaign.Schedule{Settle: sp(30 * time.Second)}, active: map[int]bool{9: true}}
	c.res.Applied = []campaign.Applied{
		{ID: 1, Injected: sp(10 * time.Second), Healed: sp(20 * time.Second)}, // healed 40 s before: too long ago
		{ID: 2, Injected: sp(40 * time.Second), Healed: sp(50 * time.Second)}, // healed 10 s before: explains
		{ID: 3, Injected: sp(70 * time.Second), Healed: sp(80 * time.Second)}, // on during the call
		{ID: 4, Injected: sp(90 * time.Second), Healed: sp(95 * time.Second)}, // after the call
		{ID: 5, Error: "inject: refused"},                                     // never on
	}
	require.Equal(t, []int{2, 3, 9}, c.explained(sp(60*time.Second), sp(75*time.Second)))
	c.active = map[int]bool{}
	require.Empty(t, c.explained(sp(200*time.Second), sp(205*time.Second)))
}

// Convergence asks every ready Stargate for every good Pylon that is not
// away, and the tunnels only where asked.
func TestMissingSkipsAwayPylonsAndUnreadyStargates(t *testing.T) {
	c := &campaignRun{pylons: []string{"camp-1", "camp-2"}, ids: map[string]string{"camp-1": "id-1", "camp-2": "id-2"}, regions: []string{"region-a", "region-b"}}
	hs := []held{
		{Region: "region-a", Pod: "sg-0", Ready: true, Registrations: []string{"id-1", "id-2"}, Tunnels: []string{"id-1"}},
		{Region: "region-a", Pod: "sg-1", Ready: false},
		{Region: "region-b", Pod: "sg-0", Ready: true, Registrations: []string{"id-1"}},
	}
	require.Equal(t, []string{"region-b/sg-0 lacks the registration of id-2"}, c.missingOf(hs, false, nil))
	require.Equal(t, []string{"region-a/sg-0 lacks the tunnel of id-2", "region-b/sg-0 lacks the tunnel of id-1", "region-b/sg-0 lacks the registration of id-2"}, c.missingOf(hs, true, nil))
	require.Empty(t, c.missingOf(hs, false, map[string]time.Time{"camp-2": time.Now()}))
	require.Equal(t, []string{"region region-b has no ready Stargate"}, c.missingOf(hs[:2], false, map[string]time.Time{"camp-2": time.Now()}),
		"a region whose Stargates are all unready or gone is not converged")
}

// An answer counts only from a worker that may give it: the base Pylon, a
// good campaign Pylon (not one away beyond the lease bound), never a
// bad-trust one, an unknown one, or none.
func TestAnAnswerFromTheWrongWorkerIsNamed(t *testing.T) {
	start := time.Now()
	c := &campaignRun{
		w:     &World{Config: &catalog.RunConfig{TimeScale: 1}},
		start: start, pylons: []string{"camp-1", "camp-2"}, bad: []string{"camp-bad-1"},
		ids:  map[string]string{"camp-1": "echo-camp-1", "camp-2": "echo-camp-2", "camp-bad-1": "echo-camp-bad-1"},
		base: []string{"echo-pylon"}, baseline: []string{"echo-pylon", "echo-held-before"},
		gone: map[string]time.Time{"camp-2": start.Add(10 * time.Second)},
	}
	for worker, want := range map[string]string{
		"echo-pylon":       "",
		"echo-held-before": "",
		"echo-camp-1":      "",
		"echo-camp-bad-1":  "the bad-trust Pylon echo-camp-bad-1, which must never register",
		"echo-stranger":    "echo-stranger, neither the base Pylon nor a campaign Pylon",
		"":                 "the answer names no worker (no system_fingerprint)",
	} {
		require.Equal(t, want, c.wrongWorker(worker, sp(60*time.Second)), "worker %q", worker)
	}
	require.Empty(t, c.wrongWorker("echo-camp-2", sp(25*time.Second)), "away 15 s: its tunnel may still be torn down")
	require.Equal(t, "Pylon echo-camp-2, removed 50s before the invocation", c.wrongWorker("echo-camp-2", sp(60*time.Second)))
}

// A handshake completed for a name the ingress's certificate does not
// cover counts from the schedule's start: what a pod counted before is
// left out, and a pod that came later counts from zero.
func TestForeignHandshakesCountFromTheStart(t *testing.T) {
	pod := func(uid string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ingress-" + uid, UID: types.UID(uid)}}
	}
	doc := func(n float64) Doc {
		return Doc{v: map[string]any{"foreign_sni": map[string]any{"stargate.region-a.nvcf.test": n}}}
	}
	c := &campaignRun{ingressBefore: map[string]map[string]int{"old": {"stargate.region-a.nvcf.test": 2}}}
	require.Empty(t, c.foreignHandshakes([]ingressDoc{{region: "region-b", pod: pod("old"), doc: doc(2)}}), "counted before the schedule began")
	require.Equal(t, []string{
		"region-b/ingress-old completed 1 handshake(s) for stargate.region-a.nvcf.test",
		"region-b/ingress-new completed 1 handshake(s) for stargate.region-a.nvcf.test",
	}, c.foreignHandshakes([]ingressDoc{{region: "region-b", pod: pod("old"), doc: doc(3)}, {region: "region-b", pod: pod("new"), doc: doc(1)}}))
	require.Empty(t, c.foreignHandshakes([]ingressDoc{{region: "region-a", pod: pod("x"), doc: Doc{v: map[string]any{}}}}), "an ingress without the field counts none")
}
