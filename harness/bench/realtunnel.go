package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/interop"
)

// TunnelVsRealOptions configure `harness bench --tunnel-vs-real`: the
// reference tunnel (reference Stargate + reference Pylon) timed against
// NVCF's real one (real Stargate + real Pylon) on loopback, no clusters.
type TunnelVsRealOptions struct {
	// BinDir holds the real stargate and pylon.
	BinDir string
	// Requests is the number of timed invocations per path (default 500);
	// a warm-up of a tenth of them (at least 20) runs first, untimed.
	Requests int
	// Artifacts receives the report (ReportFile) and the real binaries' logs.
	Artifacts string
	// Stdout receives the report; Logger the progress.
	Stdout io.Writer
	Logger *slog.Logger
}

// TunnelVsReal is what `harness bench --tunnel-vs-real` measured.
type TunnelVsReal struct {
	Started          time.Time
	Requests, Warmup int
	// Machine describes where it ran; LoadBefore and LoadAfter are
	// /proc/loadavg's first three fields.
	Machine, LoadBefore, LoadAfter string
	BinDir                         string
	// The paths: through the reference pair, the real pair, and straight
	// to the echo server both Pylons front.
	Reference, Real, Direct        Percentiles
	ReferenceURL, RealURL, EchoURL string
	// FirstByte are the same calls' times to the response's first byte
	// (its status line), by path: reference, real, direct.
	FirstByte [3]Percentiles
}

// RunTunnelVsReal starts an echo server, a reference pair and a real pair
// on loopback (every process it starts is stopped before it returns),
// waits until both pairs serve, then times o.Requests streaming chat
// completions on each path, interleaved (reference, real, direct) so that
// each sees the same machine load, after a warm-up. It writes ReportFile
// into o.Artifacts and prints it.
func RunTunnelVsReal(ctx context.Context, o TunnelVsRealOptions) (_ *TunnelVsReal, err error) {
	if o.Requests <= 0 {
		o.Requests = 500
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := o.Stdout
	if out == nil {
		out = io.Discard
	}
	if o.Artifacts == "" {
		return nil, errors.New("bench: an artifacts folder is required")
	}
	for _, role := range []string{"stargate", "pylon"} {
		if _, err := interop.RealBinary(o.BinDir, role); err != nil {
			return nil, fmt.Errorf("bench --tunnel-vs-real: %w", err)
		}
	}
	r := &TunnelVsReal{Started: time.Now().UTC(), Requests: o.Requests, Warmup: max(20, o.Requests/10), BinDir: o.BinDir,
		Machine:    fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d)", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		LoadBefore: loadAvg()}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	es := &http.Server{Handler: echo.Handler([]string{"echo"}, nil), ReadHeaderTimeout: 10 * time.Second}
	go es.Serve(ln)
	defer es.Close()
	r.EchoURL = "http://" + ln.Addr().String()

	pairs := map[interop.Side]*interop.Pair{}
	defer func() {
		for _, p := range pairs {
			err = errors.Join(err, p.Stop())
		}
	}()
	for _, side := range []interop.Side{interop.Reference, interop.Real} {
		dir := filepath.Join(o.Artifacts, "tunnel-vs-real", string(side))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		log.Info("bench: starting a pair", "pair", interop.PairName(side, side))
		p, err := interop.StartPair(ctx, interop.PairOptions{Stargate: side, Pylon: side, BinDir: o.BinDir, Dir: dir,
			Upstream: r.EchoURL, ID: "bench-" + string(side)})
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", interop.PairName(side, side), err)
		}
		pairs[side] = p
		if err := p.WaitServing(ctx, 2*time.Minute); err != nil {
			return nil, fmt.Errorf("bench: %w\n%s", err, p.Logs())
		}
	}
	r.ReferenceURL, r.RealURL = pairs[interop.Reference].InvokeURL, pairs[interop.Real].InvokeURL

	log.Info("bench: timing invocations", "requests", o.Requests, "warmup", r.Warmup)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	urls := []string{r.ReferenceURL, r.RealURL, r.EchoURL}
	times, first := make([][]time.Duration, len(urls)), make([][]time.Duration, len(urls))
	for i := range r.Warmup + o.Requests {
		for j, u := range urls {
			var fb time.Duration
			start := time.Now()
			tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { fb = time.Since(start) }})
			d, err := timeChat(tctx, client, u, fmt.Sprintf("bench-%d-%d", j, i))
			if err != nil {
				return nil, fmt.Errorf("bench: invocation %d: %w", i, err)
			}
			if i >= r.Warmup {
				times[j], first[j] = append(times[j], d), append(first[j], fb)
			}
		}
	}
	r.Reference, r.Real, r.Direct = percentiles(times[0]), percentiles(times[1]), percentiles(times[2])
	for j := range first {
		r.FirstByte[j] = percentiles(first[j])
	}
	r.LoadAfter = loadAvg()

	path := filepath.Join(o.Artifacts, ReportFile)
	if err := os.WriteFile(path, []byte(r.Markdown()), 0o644); err != nil {
		return r, fmt.Errorf("bench: write report: %w", err)
	}
	fmt.Fprint(out, r.Markdown())
	fmt.Fprintf(out, "report: %s\n", path)
	return r, nil
}

// benchText is what every timed chat completion sends (and the echo
// server streams back).
const benchText = "hello from harness bench"

// timeChat times one streaming chat completion of the echo model at
// baseURL, to its data: [DONE], checking the echo.
func timeChat(ctx context.Context, client *http.Client, baseURL, requestID string) (time.Duration, error) {
	start := time.Now()
	s, err := interop.Chat(ctx, client, baseURL, "echo", benchText, requestID)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if s.Text != benchText {
		return 0, fmt.Errorf("POST %s: echoed %q, want %q", baseURL, s.Text, benchText)
	}
	return d, nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// ratio is a over b.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Markdown renders the comparison.
func (r *TunnelVsReal) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# harness bench --tunnel-vs-real, %s\n\n", r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "Invocation latency through the reference tunnel (reference Stargate + reference Pylon, in the harness process) against NVCF's real one (stargate + pylon from %s, separate processes), on loopback, %s; load average %s before, %s after.\n\n",
		r.BinDir, r.Machine, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "%d streaming chat completions per path (\"stream\": true, the same request, the contract headers), sequential, interleaved reference / real / direct, after %d untimed rounds; each timed to its data: [DONE], keep-alive connections. Both Pylons front the same echo server.\n\n", r.Requests, r.Warmup)
	fmt.Fprintf(&b, "| path | p50 ms | p99 ms | mean ms | p50 / direct | first byte p50 / p99 ms |\n|---|---|---|---|---|---|\n")
	row := func(name, url string, p, fb Percentiles) {
		fmt.Fprintf(&b, "| %s (%s) | %s | %s | %s | %.2f× | %s / %s |\n", name, url, ms(p.P50), ms(p.P99), ms(p.Mean), ratio(p.P50, r.Direct.P50), ms(fb.P50), ms(fb.P99))
	}
	row("reference tunnel", r.ReferenceURL, r.Reference, r.FirstByte[0])
	row("real tunnel", r.RealURL, r.Real, r.FirstByte[1])
	row("direct to echo", r.EchoURL, r.Direct, r.FirstByte[2])
	fmt.Fprintf(&b, "\nreference / real: p50 %.2f×, p99 %.2f×, mean %.2f×.\n",
		ratio(r.Reference.P50, r.Real.P50), ratio(r.Reference.P99, r.Real.P99), ratio(r.Reference.Mean, r.Real.Mean))
	return b.String()
}
