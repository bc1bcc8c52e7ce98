package probe

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

func invocationHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if tunnel.CheckRequiredHeaders(r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest) // as a real Stargate
			return
		}
		var req struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if req.Model != "echo" || r.Header.Get(tunnel.HeaderModel) != req.Model {
			w.Header().Set("x-stargate-error-code", "no_eligible_candidates")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		// The echo server's answer, through the tunnel Pylon's check.
		r.Body = io.NopCloser(bytes.NewReader(b))
		tunnel.Admit(echo.Handler([]string{"echo"}, nil), nil).ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"role":"stargate","ready":true}`))
	})
	return mux
}

func TestHTTPProbes(t *testing.T) {
	ca, other := newTestCA(t, "root"), newTestCA(t, "other root")
	srv := httptest.NewUnstartedServer(invocationHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "invoke.test")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	plain := httptest.NewServer(invocationHandler())
	t.Cleanup(plain.Close)
	p := New(Options{})
	ctx := context.Background()
	target := HTTPTarget{URL: srv.URL, TLS: TLS{Roots: ca.pool(), ServerName: "invoke.test"}}

	resp, err := p.ChatCompletion(ctx, target, "echo", "hello there")
	require.NoError(t, err, "a streaming chat completion, as a real Pylon requires")
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, "hello there", resp.Stream.Text)
	require.Equal(t, "echo", resp.Stream.Model)

	resp, err = p.ChatCompletion(ctx, target, "nobody-serves-this", "hello")
	require.Equal(t, reason.NoEligibleCandidates, Classify(err), "error: %v", err)
	require.Equal(t, http.StatusNotFound, resp.Status)

	_, err = p.ChatCompletion(ctx, HTTPTarget{URL: srv.URL, TLS: TLS{Roots: other.pool(), ServerName: "invoke.test"}}, "echo", "x")
	require.Equal(t, reason.UnknownAuthority, Classify(err), "error: %v", err)

	_, err = p.ChatCompletion(ctx, HTTPTarget{URL: "https://" + plain.Listener.Addr().String(), TLS: TLS{Roots: ca.pool(), ServerName: "invoke.test"}}, "echo", "x")
	require.Equal(t, reason.PlaintextToTLS, Classify(err), "error: %v", err)

	var st struct {
		Role  string
		Ready bool
	}
	require.NoError(t, p.GetJSON(ctx, plain.URL+"/status", &st))
	require.Equal(t, "stargate", st.Role)
	require.True(t, st.Ready)

	var sb []byte
	w := &writerFunc{f: func(b []byte) { sb = append(sb, b...) }}
	require.NoError(t, p.WriteTranscript(w))
	require.Contains(t, string(sb), "reason=no_eligible_candidates")
	require.Contains(t, string(sb), "reason=unknown-authority")
}

type writerFunc struct{ f func([]byte) }

func (w *writerFunc) Write(b []byte) (int, error) { w.f(b); return len(b), nil }

// A handler that answers as a real Stargate does: 400 without the required
// headers, and the statuses and error codes of its refusals.
func TestChatCompletionAsARealStargateAnswers(t *testing.T) {
	var answer func(w http.ResponseWriter)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range []string{"x-request-id", "x-model", "x-input-tokens"} {
			if r.Header.Get(h) == "" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		if r.Header.Get("x-model") != "echo" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if err := tunnel.CheckBody(r.Method, r.URL.Path, b); err != nil {
			t.Errorf("the probe's chat completion is refused by a real Pylon: %v", err)
		}
		answer(w)
	}))
	t.Cleanup(srv.Close)
	p := New(Options{})
	target := HTTPTarget{URL: srv.URL}
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   reason.Reason
		origin reason.Origin
	}{
		{"admitted", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"))
		}, reason.None, ""},
		{"200 without an event stream", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
		}, reason.Unknown, ""},
		{"an event stream cut short", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"))
		}, reason.Unknown, ""},
		{"a real Pylon's refusal of a non-streaming call", func(w http.ResponseWriter) {
			tunnel.Problem(w, http.StatusBadRequest, "/v1/chat/completions requests must set stream=true")
		}, reason.BadRequest, reason.OriginPylon},
		{"a problem detail no Pylon sends", func(w http.ResponseWriter) {
			tunnel.Problem(w, http.StatusBadRequest, "something else")
		}, reason.BadRequest, reason.OriginStargate},
		{"overloaded", func(w http.ResponseWriter) {
			w.Header().Set("x-stargate-error-code", "input_work_limit_exceeded")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, reason.InputWorkLimitExceeded, reason.OriginStargate},
		{"bare 503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, reason.Unavailable, reason.OriginStargate},
		{"400", func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) }, reason.BadRequest, reason.OriginStargate},
		{"an unlisted code", func(w http.ResponseWriter) {
			w.Header().Set("x-stargate-error-code", "brand_new_code")
			w.WriteHeader(http.StatusNotFound)
		}, reason.Unknown, ""},
		{"500", func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) }, reason.Unknown, ""},
	} {
		answer = c.answer
		_, err := p.ChatCompletion(context.Background(), target, "echo", "hello there")
		r, o := Refusal(err)
		require.Equal(t, c.want, r, "%s: %v", c.name, err)
		require.Equal(t, c.origin, o, c.name)
		if c.name == "an unlisted code" {
			require.ErrorContains(t, err, "brand_new_code")
		}
	}
}
