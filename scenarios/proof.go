package scenarios

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/status"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/scenarios/probe"
)

// Where the server-side proofs come from. The reference Stargate serves
// its whole registry in /status; a real NVCF Stargate serves only its
// Prometheus /metrics (on the same port, 9090) and its gRPC and HTTP APIs,
// and none of them names the inference servers it holds, their tunnels,
// the handshakes it accepted or the registration calls it received. What
// it does expose is, per model, how many inference servers can serve it
// now (stargate_active_inference_servers), and the models that have one
// (ListModels). The harness's rogue registrations each announce a model
// of their own (probeModel), so those two read "an active registration of
// this id". Each check records the level at which it proved each of its
// claims; a claim nothing proves is recorded as ProofNone, never passed in
// silence.

// ProofLevel is what a server-side claim was proven from.
type ProofLevel string

// The proof levels, strongest first.
const (
	// ProofStatus: the Stargate's /status registry document (reference).
	ProofStatus ProofLevel = "status"
	// ProofMetrics: its Prometheus /metrics (stargate_active_inference_servers).
	ProofMetrics ProofLevel = "metrics"
	// ProofDiscovery: its model discovery (ListModels).
	ProofDiscovery ProofLevel = "discovery"
	// ProofNone: nothing the Stargate exposes proves the claim.
	ProofNone ProofLevel = "none"
)

// byMetrics reports whether this run's server-side proofs read /metrics
// and ListModels rather than /status.
func byMetrics(c *catalog.RunConfig) bool {
	if c == nil {
		return false
	}
	switch c.Proof {
	case catalog.ProofFromMetrics:
		return true
	case catalog.ProofFromStatus:
		return false
	}
	return c.IsReal("stargate")
}

// probeModel is the model a rogue registration of id announces, its own:
// a real Stargate's metrics and ListModels count by model, so this model
// stands for id there.
func probeModel(id string) string { return "probe-" + id }

// readActive asks a Stargate pod what a real Stargate exposes: the
// active_inference_servers gauge of its /metrics, by model, and the models
// ListModels lists.
func (e *Env) readActive(ctx context.Context, region string, p Pod) (held, error) {
	h := held{Region: region, Pod: p.Name, IP: p.IP, Ready: p.Ready, Heartbeat: defaultHeartbeat, Source: ProofMetrics}
	url := "http://" + net.JoinHostPort(p.IP, strconv.Itoa(manifests.StatusPort))
	resp, err := e.Probe.Do(ctx, probe.HTTPTarget{URL: url}, http.MethodGet, "/metrics", nil)
	if err != nil {
		return h, fmt.Errorf("Stargate %s/%s: /metrics: %w", region, p.Name, err)
	}
	if resp.Status != http.StatusOK {
		return h, fmt.Errorf("Stargate %s/%s: /metrics answered %d", region, p.Name, resp.Status)
	}
	m, err := status.ParseText(strings.NewReader(string(resp.Body)))
	if err != nil {
		return h, fmt.Errorf("Stargate %s/%s: /metrics: %w", region, p.Name, err)
	}
	h.Active = m.ByLabel(status.MetricActiveInferenceServers, "model")
	t := probe.GRPCTarget{Addr: net.JoinHostPort(p.IP, strconv.Itoa(manifests.ModelsPort)), TLS: probe.TLS{Plaintext: true}}
	if h.Listed, err = e.Probe.ListModels(ctx, t, nil); err != nil {
		return h, fmt.Errorf("Stargate %s/%s: ListModels: %w", region, p.Name, err)
	}
	return h, nil
}

// activeHere says whether h shows model as served now, and from which
// source: the gauge (metrics) or the listing (discovery).
func (h held) activeHere(model string) (bool, ProofLevel) {
	if h.Active[model] > 0 {
		return true, ProofMetrics
	}
	if slices.Contains(h.Listed, model) {
		return true, ProofDiscovery
	}
	return false, ""
}

// claim is one part of a server-side check and the level it was proven at.
type claim struct {
	what  string
	level ProofLevel
	// how says what was read, or why nothing could prove it.
	how string
}

func (c claim) String() string { return fmt.Sprintf("%s: %s (%s)", c.what, c.level, c.how) }

// weakest is the lowest level among cs (ProofNone beats everything).
func weakest(cs []claim) ProofLevel {
	order := []ProofLevel{ProofStatus, ProofMetrics, ProofDiscovery, ProofNone}
	w := ProofStatus
	for _, c := range cs {
		if slices.Index(order, c.level) > slices.Index(order, w) {
			w = c.level
		}
	}
	return w
}

// noteProof records a check's proof level for the case's result.
func (e *Env) noteProof(check string, level ProofLevel) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.proofs = append(e.proofs, string(level)+": "+check)
}

// Proofs lists the case's server-side checks, each with its proof level.
func (e *Env) Proofs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.proofs)
}

// activeMetricsNote is how a metrics or discovery claim is read, and what
// it cannot see.
const activeMetricsNote = "stargate_active_inference_servers{model} on /metrics and ListModels: an ACTIVE registration only; " +
	"a registration whose reverse tunnel is not up is invisible there"
