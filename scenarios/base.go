package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// A broken base component is a typed failure, not a deploy timeout: when
// the cell's base Pylon does not become available (the deploy's wait) or
// the cell's baseline is not met (checkBaseline), the harness reads what
// the base components report, Pylon's own refusal first, then the server
// side (each region's ingress: the refusals it made, the TLS alerts its
// clients sent), then Stargate's start-up refusals. A refusal seen the
// same on consecutive looks over baseConfirm is a BaseFailure: the cases
// that assert that part of the base path fail with its reason and origin
// (baseAsserts), every other case of the cell is an error that names it.

// basePart is a part of the cell's base path.
type basePart string

const (
	// basePylonGRPC: the base Pylon's start, its watch and its
	// registrations over TLS through each region's ingress and router to
	// Stargate.
	basePylonGRPC basePart = "registration"
	// basePylonTunnel: its reverse tunnels through each region's QUIC relay.
	basePylonTunnel basePart = "reverse tunnel"
	// baseStargate: the Stargates' start-up.
	baseStargate basePart = "start-up"
)

// BaseFailure is a conformance refusal of a base component of the cell,
// established before a case ran: its typed reason and origin, the part of
// the base path it broke, who saw it and what was read.
type BaseFailure struct {
	Reason reason.Reason
	Origin reason.Origin
	Part   basePart
	// Subject is the component whose base path broke ("the base Pylon").
	Subject string
	// Where says who refused and who saw it ("refused at region-a's
	// ingress, which saw the plaintext preface").
	Where string
	// Evidence is what was read, for people.
	Evidence string
	// Seen is how long the refusal was seen the same before it counted.
	Seen time.Duration
}

// Short names the failure in a sentence: "the base Pylon's
// plaintext-to-tls refused at region-a's ingress".
func (f *BaseFailure) Short() string {
	return fmt.Sprintf("%s's %s %s", f.Subject, f.Reason, f.Where)
}

func (f *BaseFailure) Error() string {
	return fmt.Sprintf("%s (reason %s, origin %s, on its %s path; seen the same for %s): %s",
		f.Short(), f.Reason, originName(f.Origin), f.Part, f.Seen.Round(100*time.Millisecond), f.Evidence)
}

// Unwrap is the typed refusal, so reason.Of, the judges and the reports
// read f's reason and origin.
func (f *BaseFailure) Unwrap() error {
	return &reason.Error{Reason: f.Reason, Origin: f.Origin, Err: errors.New(f.Evidence)}
}

// same reports whether g is the same refusal as f (timings and counts aside).
func (f *BaseFailure) same(g *BaseFailure) bool {
	return f != nil && g != nil && f.Reason == g.Reason && f.Origin == g.Origin && f.Part == g.Part && f.Subject == g.Subject && f.Where == g.Where
}

// baseFailureIn finds a BaseFailure in err's chain.
func baseFailureIn(err error) *BaseFailure {
	var f *BaseFailure
	if errors.As(err, &f) {
		return f
	}
	return nil
}

// blockedBy is the message of a case that a base failure keeps from a
// verdict.
func blockedBy(f *BaseFailure) string {
	return fmt.Sprintf("blocked by %s, so the case has no verdict: %v", f.Short(), f)
}

// baseAssertion is a part of the base path whose failure is a scenario's
// verdict, for the reasons listed (none: any reason).
type baseAssertion struct {
	part    basePart
	reasons []reason.Reason
}

// baseAsserted lists, by scenario, what of the base path its verdict
// asserts: a base failure there fails the case with its reason and
// origin. TestBaseAssertionsNameBaselineScenarios keeps it to scenarios
// that assert the baseline.
var baseAsserted = map[string][]baseAssertion{
	// The base Pylon watches and registers over verified TLS.
	"tls/pylon-verified":                       {{part: basePylonGRPC}},
	"registration/every-stargate-every-region": {{part: basePylonGRPC}},
	// An https:// address is dialled as https: a Pylon that dials it in
	// plaintext, or is handed a scheme-less one, breaks it;
	// tls-not-started is how the server side sees a client without TLS
	// that gives up on https before a byte (NVCF's Pylon at the fixed
	// snapshot: epic defect 1).
	"registration/explicit-https": {{part: basePylonGRPC, reasons: []reason.Reason{reason.PlaintextToTLS, reason.TLSNotStarted, reason.SchemeRequired}}},
	// The base Pylon's reverse tunnels.
	"quic/pylon-tunnel": {{part: basePylonTunnel}},
	// Every Stargate ready and discoverable.
	"discovery/identities":         {{part: baseStargate}},
	"discovery/no-dashed-identity": {{part: baseStargate}},
}

// baseAsserts reports whether s's verdict is the base failure f.
func baseAsserts(s catalog.Scenario, f *BaseFailure) bool {
	for _, a := range baseAsserted[s.ID] {
		if a.part == f.Part && (len(a.reasons) == 0 || slices.Contains(a.reasons, f.Reason)) {
			return true
		}
	}
	return false
}

// baseConfirm is how long a refusal must be seen the same, on every look,
// before it is a BaseFailure: longer than the reference Pylon's retry
// backoff (2 s), so a refusal left in its /status by a case before, which
// its next attempt clears, does not count.
const baseConfirm = 3 * time.Second

// baseLookEvery is how often a baseWatch reads the components, and
// baseLookTimeout bounds one look (a pod that does not answer).
const (
	baseLookEvery   = time.Second
	baseLookTimeout = 5 * time.Second
)

// baseWatch reads the base components' refusals during one wait and
// establishes one (look); it keeps what it saw between looks.
type baseWatch struct {
	e       *Env
	start   time.Time
	confirm time.Duration
	// ingress holds, per ingress pod ("region/pod"), its counts (refused
	// and client alerts, by key) when a watch of the cell first read it:
	// only refusals made since count (World.ingressSeen, shared; read
	// and written under World.baseMu).
	ingress map[string]map[string]int
	prev    *BaseFailure
	since   time.Time
	looked  time.Time
}

func (e *Env) newBaseWatch() *baseWatch {
	return &baseWatch{e: e, start: time.Now(), confirm: baseConfirm, ingress: e.ingressFirstSeen(e.Deployed.Cell)}
}

// lookEvery is look at most every baseLookEvery; between looks it reports
// nothing.
func (w *baseWatch) lookEvery(ctx context.Context) *BaseFailure {
	if time.Since(w.looked) < baseLookEvery {
		return nil
	}
	return w.look(ctx)
}

// look reads the components once; it returns the refusal read when it
// was read the same on every look for at least w.confirm (and on two
// looks at least).
func (w *baseWatch) look(ctx context.Context) *BaseFailure {
	w.looked = time.Now()
	ctx, cancel := context.WithTimeout(ctx, baseLookTimeout)
	defer cancel()
	f := w.read(ctx)
	if f == nil || !f.same(w.prev) {
		w.prev, w.since = f, time.Now()
		return nil
	}
	if seen := time.Since(w.since); seen >= w.confirm {
		f.Seen = seen
		return f
	}
	return nil
}

// watch is w as the deploy's RefusalWatch.
func (w *baseWatch) watch(ctx context.Context) error {
	if f := w.look(ctx); f != nil {
		return f
	}
	return nil
}

// read is one look at what the base components report, nil when none of
// them reports a conformance refusal.
func (w *baseWatch) read(ctx context.Context) *BaseFailure {
	server := w.ingressRefusals(ctx)
	if f := w.pylonRefusal(ctx); f != nil {
		w.corroborate(f, server)
		return f
	}
	if f := w.stargateRefusal(ctx); f != nil {
		return f
	}
	if len(server) > 0 {
		s := server[0]
		f := &BaseFailure{Reason: s.reason, Part: basePylonGRPC, Subject: "the base Pylon", Evidence: s.evidence()}
		if s.alert {
			f.Origin, f.Where = reason.OriginPylon, "refused by the base Pylon: a TLS alert "+s.region+"'s ingress saw"
		} else {
			f.Origin, f.Where = reason.OriginIngress, "refused at "+s.region+"'s ingress"
		}
		return f
	}
	return nil
}

// corroborate gives f, read from Pylon, the server side's origin when the
// region's ingress saw and refused the same (a Pylon that dials a TLS
// port in plaintext can only guess plaintext-to-tls from a closed
// connection; the ingress saw the preface), and adds what the ingresses
// saw to the evidence.
func (w *baseWatch) corroborate(f *BaseFailure, server []serverRefusal) {
	for _, s := range server {
		f.Evidence += "; " + s.evidence()
		if !s.alert && s.reason == f.Reason && f.Origin == reason.OriginPylon {
			f.Origin, f.Where = reason.OriginIngress, "refused at "+s.region+"'s ingress"
		}
	}
}

// pylonRefusal is the base Pylon's own refusal: its container's typed
// termination message, else the first non-transient reason of its
// /status (a real Pylon serves none).
func (w *baseWatch) pylonRefusal(ctx context.Context) *BaseFailure {
	e := w.e
	if exit := e.pylonExit(ctx, manifests.PylonName); exit != nil && reason.Of(exit) != reason.Unknown {
		return &BaseFailure{Reason: reason.Of(exit), Origin: reason.OriginOf(exit), Part: basePylonGRPC, Subject: "the base Pylon",
			Where: "refused by " + originName(reason.OriginOf(exit)) + " at the base Pylon's start", Evidence: exit.Error()}
	}
	doc, err := e.PylonStatus(ctx, manifests.PylonName)
	if err != nil {
		return nil
	}
	m, _ := doc.v.(map[string]any)
	for _, sec := range []struct {
		key  string
		part basePart
	}{{"registrations", basePylonGRPC}, {"watches", basePylonGRPC}, {"extra", basePylonTunnel}} {
		rs := Doc{Pod: doc.Pod, v: m[sec.key]}.Refusals(reason.OriginPylon)
		if len(rs) == 0 {
			continue
		}
		r := rs[0]
		where := "refused by the base Pylon itself"
		if r.Origin != reason.OriginPylon {
			where = "refused by the " + originName(r.Origin) + " (the base Pylon's /status says)"
		}
		return &BaseFailure{Reason: r.Reason, Origin: r.Origin, Part: sec.part, Subject: "the base Pylon", Where: where,
			Evidence: "the base Pylon's /status (" + doc.Pod + "): " + doc.String()}
	}
	return nil
}

// stargateRefusal is a Stargate pod's typed refusal to start (its
// container's termination message), in any region.
func (w *baseWatch) stargateRefusal(ctx context.Context) *BaseFailure {
	for _, r := range w.e.Regions() {
		pods, err := w.pods(ctx, r, deploy.StargateSelector())
		if err != nil {
			continue
		}
		for _, p := range pods {
			for _, st := range p.Status.ContainerStatuses {
				for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
					if t == nil || t.ExitCode == 0 {
						continue
					}
					err := terminated(t, fmt.Sprintf("Stargate %s/%s (container %s) exited with code %d", r, p.Name, st.Name, t.ExitCode))
					if reason.Of(err) == reason.Unknown {
						continue
					}
					return &BaseFailure{Reason: reason.Of(err), Origin: reason.OriginOf(err), Part: baseStargate, Subject: "the base Stargate " + r + "/" + p.Name,
						Where: "refused by " + originName(reason.OriginOf(err)) + " at its start", Evidence: err.Error()}
				}
			}
		}
	}
	return nil
}

// serverRefusal is a refusal an ingress pod made, or a client's TLS
// alert it saw, since the watch first read that pod.
type serverRefusal struct {
	region, pod string
	reason      reason.Reason
	alert       bool
	count       int
	last        string
}

func (s serverRefusal) evidence() string {
	what := "refused %d connection(s) with %s"
	if s.alert {
		what = "saw %d TLS alert(s) from its client saying %s"
	}
	out := fmt.Sprintf("%s's ingress (%s) "+what, s.region, s.pod, s.count, s.reason)
	if s.last != "" {
		out += " (last: " + s.last + ")"
	}
	return out
}

// ingressRefusals reads every region's ingress pods' /status and lists
// the refusals made, and alerts seen, since the watch first read each
// pod (a pod created after the watch started counts from zero): its own
// typed refusals first, then its clients' alerts. An unreachable
// upstream, an unclassified handshake failure and transient reasons are
// left out: they say "not yet", or nothing.
func (w *baseWatch) ingressRefusals(ctx context.Context) []serverRefusal {
	var own, alerts []serverRefusal
	for _, in := range w.e.ingressDocs(ctx) {
		counts, last := ingressCounts(in.doc)
		before := w.firstSeen(in.region+"/"+in.pod.Name, counts, in.pod.CreationTimestamp.After(w.start))
		for _, k := range slices.Sorted(maps.Keys(counts)) {
			n := counts[k] - before[k]
			if n <= 0 {
				continue
			}
			name, alert := strings.CutPrefix(k, alertKey)
			s := serverRefusal{region: in.region, pod: in.pod.Name, reason: reason.Reason(name), alert: alert, count: n, last: last}
			switch {
			case alert:
				alerts = append(alerts, s)
			case name == "upstream-unreachable" || name == "handshake-failed" || transient(s.reason):
			default:
				own = append(own, s)
			}
		}
	}
	return append(own, alerts...)
}

// ingressDoc is one ingress pod's /status.
type ingressDoc struct {
	region string
	pod    corev1.Pod
	doc    Doc
}

// ingressDocs reads the /status of every region's ingress pods that run
// (not being deleted, with an IP); a region or pod that does not answer
// is left out.
func (e *Env) ingressDocs(ctx context.Context) []ingressDoc {
	var out []ingressDoc
	sel := labels.SelectorFromSet(manifests.Selector(manifests.IngressName, manifests.IngressName))
	for _, r := range e.Regions() {
		cs, err := e.Kube(r)
		if err != nil {
			continue
		}
		l, err := cs.CoreV1().Pods(e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			continue
		}
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
				continue
			}
			doc, err := e.status(ctx, Pod{Name: p.Name, IP: p.Status.PodIP}, manifests.StatusPort)
			if err != nil {
				continue
			}
			out = append(out, ingressDoc{region: r, pod: p, doc: doc})
		}
	}
	return out
}

// alertKey prefixes the client alerts' keys in ingressCounts.
const alertKey = "client-alert/"

// ingressCounts reads an ingress's /status: its refusals by reason
// ("refused") and its clients' TLS alerts ("client_alerts", keyed
// alertKey+reason), and its last refusal's text.
func ingressCounts(d Doc) (map[string]int, string) {
	out := d.Counts("refused")
	for k, n := range d.Counts("client_alerts") {
		out[alertKey+k] = n
	}
	m, _ := d.v.(map[string]any)
	last, _ := m["last_refusal"].(string)
	return out, last
}

// pods lists the pods of sel in cluster.
func (w *baseWatch) pods(ctx context.Context, cluster string, sel labels.Selector) ([]corev1.Pod, error) {
	cs, err := w.e.Kube(cluster)
	if err != nil {
		return nil, err
	}
	l, err := cs.CoreV1().Pods(w.e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// firstSeen is the counts of the ingress pod key when a watch of the cell
// first read it: counts now, or none for a pod created after this watch
// began (every refusal it made is new).
func (w *baseWatch) firstSeen(key string, counts map[string]int, newPod bool) map[string]int {
	w.e.baseMu.Lock()
	defer w.e.baseMu.Unlock()
	before, seen := w.ingress[key]
	if !seen {
		before = map[string]int{}
		if !newPod {
			before = counts
		}
		w.ingress[key] = before
	}
	return before
}
