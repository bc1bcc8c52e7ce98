package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/interop"
	"github.com/nvcf/conformance/fixtures/stargate"
	fstatus "github.com/nvcf/conformance/fixtures/status"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

// The probe against NVCF's real binaries, on loopback: set
// NVCF_REAL_BIN_DIR to a directory holding stargate and pylon built from
// NVIDIA/nvcf (src/libraries/rust/stargate), e.g.
//
//	NVCF_REAL_BIN_DIR=DIR go test -run Real ./scenarios/probe/
//
// Every process these tests start listens on 127.0.0.1 (a real Stargate
// binds its metrics port on every address: it takes only a port) and is
// killed, by its pid, when the test ends.

// realBinDir is $NVCF_REAL_BIN_DIR, or skips the test.
func realBinDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(interop.BinDirEnv)
	if dir == "" {
		t.Skipf("%s is unset: these tests run NVCF's real stargate and pylon on loopback; point it at a directory of binaries built from NVIDIA/nvcf", interop.BinDirEnv)
	}
	return dir
}

// realStargate is a real Stargate on loopback in reverse mode (started
// by fixtures/interop, the one home of the real binaries' command
// lines), with its reverse-QUIC PKI.
type realStargate struct {
	grpc, http, metrics string
	pki                 *interop.PKI
}

// startRealStargate starts a real Stargate until the test ends; its log
// is shown when the test fails.
func startRealStargate(t *testing.T) realStargate {
	t.Helper()
	dir := realBinDir(t)
	pki, err := interop.MintPKI(t.TempDir())
	require.NoError(t, err)
	sg, err := interop.StartRealStargate(context.Background(), dir, pki, t.TempDir())
	require.NoError(t, err)
	stopWithLog(t, sg.Process)
	return realStargate{grpc: sg.GRPC, http: sg.HTTP, metrics: sg.Metrics, pki: pki}
}

// stopWithLog stops p (by its pid) when the test ends, showing its log
// when the test failed.
func stopWithLog(t *testing.T, p *interop.Process) {
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", p.Name, p.LogTail(4000))
		}
	})
}

// activeServers reads stargate_active_inference_servers for model.
func (sg realStargate) activeServers(t *testing.T, p *Prober, model string) float64 {
	t.Helper()
	resp, err := p.Do(context.Background(), HTTPTarget{URL: "http://" + sg.metrics}, http.MethodGet, "/metrics", nil)
	require.NoError(t, err)
	m, err := fstatus.ParseText(strings.NewReader(string(resp.Body)))
	require.NoError(t, err)
	return m.ByLabel(fstatus.MetricActiveInferenceServers, "model")[model]
}

// grpcMessage is the message of the gRPC status in err.
func grpcMessage(err error) string {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Message()
	}
	return ""
}

// A real Stargate refuses a registration's URL with the texts, and for
// the cases, of the reference's admission (stargate.URLProblem), and
// admits the probe's rogue registration.
func TestRealStargateAdmitsAsTheReference(t *testing.T) {
	sg := startRealStargate(t)
	p := New(Options{Timeout: 10 * time.Second})
	g := GRPCTarget{Addr: sg.grpc, TLS: TLS{Plaintext: true}}
	for i, c := range []struct {
		url     string
		reverse bool
	}{
		{"http://rogue.probe.invalid:8080", false}, // what the probe used to send for an authority case
		{"quic://rogue.probe.invalid:8080", false},
		{"quic://10.0.0.1", false},
		{"quic://[::1]:8080", false},
		{"quic://", false},
		{"quic:///x", false},
		{"https://backend:99999", true},
		{"quic:10.0.0.1:8080", false},
		{"quic://10.0.0.1:65536", false},
		{"not a url", false},
		{"quic://10.0.0.1:8080", true},
		{"http://", true},
	} {
		want := stargate.URLProblem(c.url, c.reverse)
		require.NotEmpty(t, want, c.url)
		reg := RogueRegistration(fmt.Sprintf("refused-%d", i), "probe-refused")
		reg.InferenceServerUrl, reg.ReverseTunnel = c.url, c.reverse
		_, err := p.Register(context.Background(), g, reg)
		r, o := Refusal(err)
		require.Equal(t, reason.InvalidRegistration, r, "%q reverse=%t: %v", c.url, c.reverse, err)
		require.Equal(t, reason.OriginStargate, o)
		require.Equal(t, "invalid inference_server_url: "+want, grpcMessage(err), "%q reverse=%t", c.url, c.reverse)
	}
	reg, err := p.Register(context.Background(), g, RogueRegistration("rogue-admitted", "probe-rogue-admitted"))
	require.NoError(t, err, "the probe's rogue registration is valid for a real Stargate")
	reg.Close()
}

// The probe's held tunnel on a real Stargate: the health checks come with
// a real Stargate's headers and pass, so the rogue model turns active in
// stargate_active_inference_servers (what proves quic/tunnel-up on a real
// Stargate), an invocation of it through Stargate's HTTP port streams
// back the probe's echo, and once the tunnel is closed the still
// registered model is a bare 503 (unavailable) while a model nobody
// registered is 404 no_eligible_candidates.
func TestRealStargateSeesTheHeldTunnel(t *testing.T) {
	sg := startRealStargate(t)
	p := New(Options{Timeout: 10 * time.Second})
	ctx := context.Background()
	id := "probe-tunnel-1"
	model := "probe-" + id
	reg, err := p.Register(ctx, GRPCTarget{Addr: sg.grpc, TLS: TLS{Plaintext: true}}, RogueRegistration(id, model))
	require.NoError(t, err)
	defer reg.Close()
	target, dial := reg.Ack.GetReverseTunnelTarget(), reg.Ack.GetReverseTunnelPylonDialAddr()
	require.NotEmpty(t, target)
	require.NotEmpty(t, dial)
	invoke := HTTPTarget{URL: "http://" + sg.http}

	// Registered, no tunnel yet: not routable.
	_, err = p.ChatCompletion(ctx, invoke, model, "too early")
	r, o := Refusal(err)
	require.Equal(t, reason.Unavailable, r, "%v", err)
	require.Equal(t, reason.OriginStargate, o)

	held, err := p.OpenTunnel(ctx, QUICTarget{Addr: dial, TLS: TLS{Roots: sg.pki.Roots, ServerName: tunnel.ServerName(target)},
		InferenceServerID: id, Models: []string{model}})
	require.NoError(t, err)
	defer held.Close()
	require.Eventually(t, func() bool { return sg.activeServers(t, p, model) == 1 }, 60*time.Second, 250*time.Millisecond,
		"the held tunnel makes the rogue model active in the real Stargate's metrics")
	all, real := held.HealthChecks()
	require.Positive(t, all, "a real Stargate checks the tunnel's health")
	require.Equal(t, all, real, "with its own headers")

	resp, err := p.ChatCompletion(ctx, invoke, model, "through a real stargate nonce-7f3a")
	require.NoError(t, err)
	require.Equal(t, "through a real stargate nonce-7f3a", resp.Stream.Text)
	require.Equal(t, int64(1), held.Requests())

	_, err = p.ChatCompletion(ctx, invoke, "probe-nobody-registered", "hello")
	r, o = Refusal(err)
	require.Equal(t, reason.NoEligibleCandidates, r, "%v", err)
	require.Equal(t, reason.OriginStargate, o)

	held.Close()
	require.Eventually(t, func() bool {
		_, err := p.ChatCompletion(ctx, invoke, model, "after the tunnel")
		r, _ := Refusal(err)
		return r == reason.Unavailable
	}, 60*time.Second, 250*time.Millisecond, "a registered model without its tunnel is a bare 503")
}

// A real Pylon in front of the echo server, behind a real Stargate: the
// probe's streaming chat completion is echoed; a chat completion or a
// response that does not stream, and a body that is not JSON, are
// refused with the problem details of the reference Pylon's checks
// (tunnel.CheckBody).
func TestRealPylonRequiresTheContractTheProbeFollows(t *testing.T) {
	sg := startRealStargate(t)
	es := httptest.NewServer(echo.Handler([]string{"echo"}, nil)) // loopback
	t.Cleanup(es.Close)
	py, err := interop.StartRealPylon(context.Background(), realBinDir(t),
		interop.PylonOptions{Stargate: sg.grpc, Upstream: es.URL, ID: "is-1", Model: "echo", CAPath: sg.pki.CAPath}, t.TempDir())
	require.NoError(t, err)
	stopWithLog(t, py.Process)
	p := New(Options{Timeout: 10 * time.Second})
	require.Eventually(t, func() bool { return sg.activeServers(t, p, "echo") == 1 }, 60*time.Second, 250*time.Millisecond,
		"the real Pylon's tunnel is up and healthy")
	invoke := HTTPTarget{URL: "http://" + sg.http}
	resp, err := p.ChatCompletion(context.Background(), invoke, "echo", "one two three nonce-c0ffee")
	require.NoError(t, err)
	require.Equal(t, "one two three nonce-c0ffee", resp.Stream.Text)

	for _, c := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`, (&tunnel.BodyError{Path: "/v1/chat/completions"}).Error()},
		{"/v1/chat/completions", `{"model":"echo","stream":"true"}`, (&tunnel.BodyError{Path: "/v1/chat/completions"}).Error()},
		{"/v1/responses", `{"model":"echo","input":"hi"}`, (&tunnel.BodyError{Path: "/v1/responses"}).Error()},
		{"/v1/chat/completions", `not json`, tunnel.DetailInvalidJSON},
		{"/v1/embeddings", ``, tunnel.DetailInvalidJSON},
	} {
		hdr := http.Header{}
		tunnel.SetRequiredHeaders(hdr, "real-"+c.path, "echo", 1)
		resp, err := p.do(context.Background(), invoke, http.MethodPost, c.path, []byte(c.body), hdr)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.Status, "%s %s", c.path, c.body)
		require.Equal(t, c.want, tunnel.ProblemDetail(resp.Body), "%s %s", c.path, c.body)
		require.Equal(t, c.want, tunnel.CheckBody(http.MethodPost, c.path, []byte(c.body)).Error(), "the reference Pylon's check agrees")
		r, o, ok := reason.OfPylonProblem(resp.Status, tunnel.ProblemDetail(resp.Body))
		require.True(t, ok, "a listed Pylon text")
		require.Equal(t, reason.BadRequest, r)
		require.Equal(t, reason.OriginPylon, o)
	}
}
