package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/fixtures/stargate"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// replicaDoc is the /status of a reference Stargate holding registrations
// of ids, tunnels of tunnels, and calls RegisterInferenceServer calls.
func replicaDoc(t *testing.T, ids, tunnels []string, calls int64) Doc {
	t.Helper()
	return probedDoc(t, ids, tunnels, calls, nil)
}

// probedDoc is replicaDoc whose calls carried the probe ids of probed.
func probedDoc(t *testing.T, ids, tunnels []string, calls int64, probed map[string]int64) Doc {
	t.Helper()
	st := stargate.Status{Role: "stargate", HeartbeatMS: 2000,
		Requests: map[string]stargate.MethodRequests{"RegisterInferenceServer": {Total: calls, ByProbe: probed}},
		Extra: map[string]any{"reverse_tunnel": map[string]any{"sessions": tunnels,
			"handshakes": map[string]any{"accepted": len(tunnels), "accepted_by_id": map[string]int{}}}}}
	for _, id := range ids {
		st.InferenceServers = append(st.InferenceServers, stargate.InferenceServer{ID: id})
	}
	if st.InferenceServers == nil {
		st.InferenceServers = []stargate.InferenceServer{}
	}
	raw, err := json.Marshal(st)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	return Doc{Pod: "sg", v: v}
}

func heldBy(t *testing.T, region, pod string, d Doc) held {
	t.Helper()
	h, err := readHeld(region, Pod{Name: pod, IP: "198.18.10.5"}, d)
	require.NoError(t, err)
	return h
}

func TestReadHeldReadsTheReferenceStatus(t *testing.T) {
	h := heldBy(t, "region-a", "stargate-0", replicaDoc(t, []string{"echo-pylon"}, []string{"echo-pylon"}, 3))
	require.Equal(t, []string{"echo-pylon"}, h.Registrations)
	require.Equal(t, []string{"echo-pylon"}, h.Tunnels)
	require.Equal(t, int64(3), h.Registers)
	require.Equal(t, 2*time.Second, h.Heartbeat)

	_, err := readHeld("region-a", Pod{Name: "stargate-0"}, Doc{v: map[string]any{"inference_servers": []any{}}})
	require.ErrorContains(t, err, "lacks requests (per-method RPC counts), extra.reverse_tunnel", "a status without the fields cannot prove anything")
}

// A refusal is only proven when no replica holds, tunnels or was reached
// by the refused registration; each breach names the replica.
func TestAbsenceNamesEveryBreach(t *testing.T) {
	before := []held{
		heldBy(t, "region-a", "stargate-0", replicaDoc(t, []string{"echo-pylon"}, nil, 4)),
		heldBy(t, "region-b", "stargate-0", replicaDoc(t, []string{"echo-pylon"}, nil, 2)),
	}
	a := absence{id: "authority-1", before: before, routed: true}
	require.Empty(t, a.violations(before), "nothing changed: the refusal holds")

	// Another case's calls, running at the same time, are not a breach.
	others := []held{
		heldBy(t, "region-a", "stargate-0", probedDoc(t, []string{"echo-pylon", "authority-9"}, nil, 6, map[string]int64{"authority-9": 2})),
		heldBy(t, "region-b", "stargate-0", replicaDoc(t, []string{"echo-pylon"}, nil, 2)),
	}
	require.Empty(t, a.violations(others), "only authority-1's own calls count")

	now := []held{
		heldBy(t, "region-a", "stargate-0", probedDoc(t, []string{"authority-1", "echo-pylon"}, nil, 5, map[string]int64{"authority-1": 1})),
		heldBy(t, "region-b", "stargate-0", replicaDoc(t, []string{"echo-pylon"}, []string{"authority-1"}, 2)),
	}
	v := a.violations(now)
	require.Contains(t, v, "Stargate region-a/stargate-0 holds a registration of authority-1")
	require.Contains(t, v, "Stargate region-a/stargate-0 received 1 RegisterInferenceServer call(s) of authority-1 since before the attempt")
	require.Contains(t, v, "Stargate region-b/stargate-0 holds a reverse tunnel of authority-1")

	// A quic case's own registration is allowed where it was made, a tunnel never.
	q := absence{id: "authority-1", before: before, registeredOn: "region-a/stargate-0"}
	require.Equal(t, []string{"Stargate region-b/stargate-0 holds a reverse tunnel of authority-1"}, q.violations(now))
}

// An accepted registration must land on exactly the named replica, and
// the call that made it too.
func TestPresenceRequiresExactlyTheNamedReplica(t *testing.T) {
	before := []held{
		heldBy(t, "region-a", "stargate-0", replicaDoc(t, nil, nil, 0)),
		heldBy(t, "region-a", "stargate-1", replicaDoc(t, nil, nil, 0)),
	}
	p := presence{id: "authority-2", on: []string{"region-a/stargate-1"}, before: before}
	right := []held{ // another case's call reached stargate-0 meanwhile
		heldBy(t, "region-a", "stargate-0", probedDoc(t, nil, nil, 1, map[string]int64{"authority-9": 1})),
		heldBy(t, "region-a", "stargate-1", probedDoc(t, []string{"authority-2"}, nil, 1, map[string]int64{"authority-2": 1})),
	}
	require.NoError(t, p.mismatch(right, p.on))

	unseen := []held{ // registered, but no call of authority-2 was counted anywhere
		heldBy(t, "region-a", "stargate-0", replicaDoc(t, nil, nil, 0)),
		heldBy(t, "region-a", "stargate-1", replicaDoc(t, []string{"authority-2"}, nil, 1)),
	}
	require.ErrorContains(t, p.mismatch(unseen, p.on), "replicas that received a RegisterInferenceServer call of authority-2")

	wrong := []held{ // registered on the named one, but the call went to the other first
		heldBy(t, "region-a", "stargate-0", probedDoc(t, nil, nil, 1, map[string]int64{"authority-2": 1})),
		heldBy(t, "region-a", "stargate-1", probedDoc(t, []string{"authority-2"}, nil, 1, map[string]int64{"authority-2": 1})),
	}
	require.ErrorContains(t, p.mismatch(wrong, p.on), "replicas that received a RegisterInferenceServer call of authority-2")
	elsewhere := []held{
		heldBy(t, "region-a", "stargate-0", replicaDoc(t, []string{"authority-2"}, nil, 1)),
		heldBy(t, "region-a", "stargate-1", replicaDoc(t, nil, nil, 0)),
	}
	require.ErrorContains(t, p.mismatch(elsewhere, p.on), "replicas holding a registration of authority-2")
}

// The window covers at least three heartbeats of the slowest replica, and
// a time scale can only lengthen it.
func TestWindowCoversThreeHeartbeats(t *testing.T) {
	e := &Env{World: &World{Config: &catalog.RunConfig{TimeScale: 0.1}}}
	slow := heldBy(t, "region-b", "stargate-0", replicaDoc(t, nil, nil, 0))
	slow.Heartbeat = 4 * time.Second
	w, hb := e.window([]held{heldBy(t, "region-a", "stargate-0", replicaDoc(t, nil, nil, 0)), slow})
	require.Equal(t, 4*time.Second, hb)
	require.Equal(t, 14*time.Second, w)
	e.Config.TimeScale = 2
	w, _ = e.window([]held{slow})
	require.Equal(t, 28*time.Second, w)
}

// A failed cleanup joined behind a refusal: errors.As finds the refusal
// first (reason.Of), which is why the suite looks for the step's failure
// before judging (TestSuiteJudgesCases runs it through the features).
func TestFailedCleanupIsFoundBehindTheRefusal(t *testing.T) {
	w := &World{Config: &catalog.RunConfig{TimeScale: 1}, deployer: &fakeDeployer{}, Log: slog.New(slog.DiscardHandler)}
	e := &Env{World: w}
	err := e.WithPylon(context.Background(), PylonVariant{Name: "x"}, func(context.Context, *deploy.Variant) error { return errRefused })
	require.Equal(t, reason.UnknownAuthority, reason.Of(err), "the refusal is still what a reason lookup finds")
	se := stepFailure(err)
	require.NotNil(t, se, "and the cleanup's failure is found beside it")
	require.True(t, errors.Is(se, errCleanup))
	require.Nil(t, stepFailure(errRefused))
}
