package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/fixtures/wire/reason"
)

func invocationHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if tunnel.CheckRequiredHeaders(r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest) // as a real Stargate
			return
		}
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "echo" || r.Header.Get(tunnel.HeaderModel) != req.Model {
			w.Header().Set("x-stargate-error-code", "no_eligible_candidates")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
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

	resp, err := p.ChatCompletion(ctx, target, "echo", "hello")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status)

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
