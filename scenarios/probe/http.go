package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/wire/reason"
)

// HTTPTarget is where and how an HTTP probe sends a request.
type HTTPTarget struct {
	// URL is the base URL, e.g. "https://invoke.region-a.nvcf.test:8000".
	URL string
	// TLS secures https URLs (ignored for http URLs, which are plaintext on purpose).
	TLS TLS
}

// Response is what an HTTP probe got back.
type Response struct {
	Status int
	// ErrorCode is the x-stargate-error-code header.
	ErrorCode string
	Header    http.Header
	Body      []byte
	// Stream is the event stream read from Body (ChatCompletion only).
	Stream *echo.Stream
}

// maxBody bounds what a probe reads of a response.
const maxBody = 1 << 20

func (p *Prober) httpClient(t HTTPTarget) (*http.Client, *connRecord, error) {
	u, err := url.Parse(t.URL)
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("HTTP target %q: want scheme://host:port (%v)", t.URL, err)
	}
	rec := &connRecord{}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := p.dialTCP(ctx, addr)
			if err != nil {
				rec.setErr(err)
				return nil, err
			}
			rec.mu.Lock()
			rec.dialed = true
			rec.mu.Unlock()
			return &recordingConn{Conn: c, rec: rec}, nil
		},
		DisableKeepAlives: true,
	}
	if u.Scheme == "https" {
		cfg, err := t.TLS.config(u.Hostname())
		if err != nil {
			return nil, nil, err
		}
		tr.TLSClientConfig = cfg
		tr.ForceAttemptHTTP2 = true
	}
	return &http.Client{Transport: tr}, rec, nil
}

// Do sends one request to t.URL+path and returns the response. A response
// with an x-stargate-error-code Stargate refuses with (404
// no_eligible_candidates, say: reason.OfRealHTTP) is returned together
// with an error of its reason; other statuses are returned without an
// error, for the caller to judge.
func (p *Prober) Do(ctx context.Context, t HTTPTarget, method, path string, body []byte) (*Response, error) {
	return p.do(ctx, t, method, path, body, nil)
}

func (p *Prober) do(ctx context.Context, t HTTPTarget, method, path string, body []byte, hdr http.Header) (resp *Response, err error) {
	start := time.Now()
	defer func() {
		sec := "plaintext"
		if strings.HasPrefix(t.URL, "https://") {
			sec = t.TLS.describe()
		}
		desc := fmt.Sprintf("%s %s%s %s", method, t.URL, path, sec)
		if resp != nil && err == nil {
			desc += fmt.Sprintf(" → %d", resp.Status)
		}
		p.record("http", desc, start, err)
	}()
	ctx, cancel := p.bound(ctx)
	defer cancel()
	c, rec, err := p.httpClient(t)
	if err != nil {
		return nil, err
	}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, method, t.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("request %s %s: %w", method, t.URL+path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	hr, err := c.Do(req)
	if err != nil {
		u, _ := url.Parse(t.URL)
		cause, sniffed := p.explain(ctx, rec, u.Host, u.Scheme != "https")
		if cause != nil && Classify(err) == reason.Unknown {
			err = fmt.Errorf("%w (connection: %w)", err, cause)
		}
		return nil, classified(fmt.Errorf("%s %s: %w", method, t.URL+path, err), fromPeer(sniffed))
	}
	defer hr.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		return nil, classified(fmt.Errorf("read response of %s %s: %w", method, t.URL+path, err), reason.Message{})
	}
	resp = &Response{Status: hr.StatusCode, ErrorCode: hr.Header.Get("x-stargate-error-code"), Header: hr.Header, Body: data}
	if resp.ErrorCode != "" {
		// The header is Stargate's: it names Stargate as the origin.
		err := fmt.Errorf("%s %s: %d %s", method, t.URL+path, resp.Status, resp.ErrorCode)
		if r, o, ok := reason.OfRealHTTP(resp.Status, resp.ErrorCode); ok {
			return resp, reason.WrapFrom(r, o, err)
		}
		return resp, reason.Wrap(reason.Unknown, fmt.Errorf("%w: an x-stargate-error-code no list names", err))
	}
	return resp, nil
}

// ChatCompletion posts a minimal OpenAI-style streaming chat completion
// ("stream": true: a real Pylon forwards no other) for model, with the
// headers a real Stargate requires of it (x-request-id, x-model,
// x-input-tokens), and reads the answer's server-sent events up to
// "data: [DONE]": Response.Stream holds the deltas' text. A non-2xx
// status is an error, of the reason Pylon's problem details name
// (reason.OfPylonProblem, origin pylon), else of the one Stargate's status
// names (reason.OfRealHTTP: 400 bad-request, say), else reason.Unknown with the
// status and body quoted; so is a 2xx answer that is not a whole event
// stream of chat completion chunks (it holds what was read).
func (p *Prober) ChatCompletion(ctx context.Context, t HTTPTarget, model, content string) (*Response, error) {
	body, err := json.Marshal(map[string]any{
		"model":    model,
		"stream":   true,
		"messages": []map[string]string{{"role": "user", "content": content}},
	})
	if err != nil {
		return nil, err
	}
	hdr := http.Header{"Accept": {"text/event-stream"}}
	tunnel.SetRequiredHeaders(hdr, fmt.Sprintf("probe-%d-%d", time.Now().UnixNano(), p.calls.Add(1)), model, uint64(len(strings.Fields(content))))
	resp, err := p.do(ctx, t, http.MethodPost, "/v1/chat/completions", body, hdr)
	if err != nil {
		return resp, err
	}
	if resp.Status/100 != 2 {
		err := fmt.Errorf("POST %s/v1/chat/completions for model %q: status %d: %s", t.URL, model, resp.Status, truncate(resp.Body))
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
			// Pylon's refusal, which Stargate passed on.
			if r, o, ok := reason.OfPylonProblem(resp.Status, tunnel.ProblemDetail(resp.Body)); ok {
				return resp, reason.WrapFrom(r, o, err)
			}
		}
		if r, o, ok := reason.OfRealHTTP(resp.Status, ""); ok {
			return resp, reason.WrapFrom(r, o, err)
		}
		return resp, reason.Wrap(reason.Unknown, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return resp, reason.Wrap(reason.Unknown, fmt.Errorf("POST %s/v1/chat/completions for model %q: status %d with Content-Type %q, not an event stream: %s", t.URL, model, resp.Status, ct, truncate(resp.Body)))
	}
	st, err := echo.ReadStream(bytes.NewReader(resp.Body))
	resp.Stream = &st
	if err != nil {
		return resp, reason.Wrap(reason.Unknown, fmt.Errorf("POST %s/v1/chat/completions for model %q: status %d: %w", t.URL, model, resp.Status, err))
	}
	return resp, nil
}

// GetJSON fetches url (plaintext http, e.g. a pod's /status on its pod IP)
// and decodes the JSON body into v.
func (p *Prober) GetJSON(ctx context.Context, rawURL string, v any) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("status URL %q: %w", rawURL, err)
	}
	resp, err := p.Do(ctx, HTTPTarget{URL: u.Scheme + "://" + u.Host}, http.MethodGet, u.RequestURI(), nil)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", rawURL, resp.Status, truncate(resp.Body))
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return fmt.Errorf("GET %s: decode JSON: %w", rawURL, err)
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
