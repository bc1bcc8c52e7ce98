package scenarios

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

func doc(t *testing.T, s string) Doc {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return Doc{Pod: "p", v: v}
}

func TestDocReadsByValue(t *testing.T) {
	// The shape of a reference Pylon-like document: registrations, tunnels, a remote watch.
	d := doc(t, `{
		"role": "pylon",
		"registrations": [
			{"stargate": "stargate-0.sg.region-a.nvcf.test", "state": "registered"},
			{"stargate": "stargate-1.sg.region-a.nvcf.test", "state": "backoff", "reason": "timeout"}
		],
		"tunnels": [{"target": "stargate-0.sg.region-a.nvcf.test", "addr": "quic.region-a.nvcf.test:50072", "state": "connected", "connects": 1}],
		"watches": [{"url": "https://stargate.region-b.nvcf.test:50071", "state": "watching"}],
		"bootstrap": {"url": "https://stargate.region-a.nvcf.test:50071", "ok": true}
	}`)
	require.True(t, d.Mentions("stargate-1.sg.region-a"))
	require.False(t, d.Mentions("region-c"))
	require.True(t, stillHealthy(d, "stargate-0.sg.region-a.nvcf.test"))
	require.False(t, stillHealthy(d, "stargate-1.sg.region-a.nvcf.test"), "backoff with a reason is not healthy")
	require.True(t, stillHealthy(d, "quic.region-a.nvcf.test"), "the tunnel through the relay is connected")
	require.True(t, stillHealthy(d, "stargate.region-b.nvcf.test"), "the remote watch is watching")
	require.True(t, connectedVia(d, "quic.region-a.nvcf.test"))
	require.False(t, connectedVia(doc(t, `{"registrations": [{"reverse_tunnel_pylon_dial_addr": "quic.region-a.nvcf.test:50072", "state": "registered"}]}`), "quic.region-a.nvcf.test"),
		"a registration naming the tunnel's address is not a connected tunnel")
	require.Equal(t, []reason.Reason{reason.Timeout}, d.Reasons())
	require.NoError(t, d.Failure(reason.OriginPylon), "timeout is transient")

	refused := doc(t, `{"bootstrap": {"url": "https://stargate.region-a.nvcf.test:50071", "state": "failed", "reason": "no-trust", "error": "trust bundle: no certificate"}, "registrations": []}`)
	f := refused.Failure(reason.OriginPylon)
	require.Equal(t, reason.NoTrust, reason.Of(f))
	require.Equal(t, reason.OriginPylon, reason.OriginOf(f), "the document's owner, when no origin is named")
	require.False(t, stillHealthy(refused, "stargate.region-a.nvcf.test"))

	// A Stargate document lists inference servers by id.
	sg := doc(t, `{"role": "stargate", "stargate_id": "stargate-0", "inference_servers": [{"id": "authority-1a2b", "authority": "stargate-0.sg.region-a.nvcf.test:50071"}]}`)
	require.True(t, sg.Mentions("authority-1a2b"))
	require.False(t, sg.Mentions("authority-ffff"))
	require.False(t, sg.Mentions("authority-1a"), "a prefix of an id is not the id")
	require.True(t, d.Mentions("stargate.region-b.nvcf.test"), "a host inside a URL")
	require.False(t, doc(t, `{"servers": ["echo-pylon-bad"]}`).Mentions("echo-pylon"), "a variant's id does not mention the base Pylon's")
	require.False(t, doc(t, `{"id": "stargate-10.sg"}`).Mentions("stargate-1.sg"))
}

// A document that holds several refusals gives all of them, in the same
// order every time, each with the origin named beside it.
func TestDocRefusalsAreDeterministic(t *testing.T) {
	const text = `{"registrations": [
		{"stargate": "sg-1", "state": "backoff", "reason": "invalid-authority", "origin": "router"},
		{"stargate": "sg-0", "state": "backoff", "reason": "unknown-authority"},
		{"stargate": "sg-2", "state": "backoff", "reason": "not-ready", "origin": "router"}
	], "watch": {"reason": "hostname-mismatch"}, "bootstrap": {"reason": "unknown-authority"}}`
	want := []reason.Message{
		{Reason: reason.UnknownAuthority, Origin: reason.OriginPylon},
		{Reason: reason.InvalidAuthority, Origin: reason.OriginRouter},
		{Reason: reason.HostnameMismatch, Origin: reason.OriginPylon},
	}
	for range 50 { // map order differs from decode to decode
		require.Equal(t, want, doc(t, text).Refusals(reason.OriginPylon))
	}
	f := doc(t, text).Failure(reason.OriginPylon)
	require.Len(t, refusalsIn(f), 3, "every refusal reaches the judge")
	// A case expecting one of them fails on the others.
	require.Error(t, judge(catalog.FailClosed(reason.UnknownAuthority).From(reason.OriginPylon), f))
	require.NoError(t, judge(catalog.FailClosed(reason.UnknownAuthority, reason.InvalidAuthority, reason.HostnameMismatch), f))
	require.Error(t, judge(catalog.FailClosed(reason.UnknownAuthority, reason.InvalidAuthority, reason.HostnameMismatch).From(reason.OriginPylon), f),
		"invalid-authority came from the router")
}
