package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/fixtures/status"
)

// Server-side proof: what every Stargate replica of every region holds,
// read from each pod's /status. A refusal seen by a client means nothing
// if a Stargate registered the refused inference server anyway, accepted
// its tunnel, or received the refused request; a registration a client
// saw acknowledged means little unless it landed on exactly the Stargates
// it should reach. Each check writes what it asked, what it found and over
// what window to the case's evidence (server-side.txt).

// defaultHeartbeat is the registration heartbeat interval of a Stargate
// whose /status does not announce one (the protocol's default).
const defaultHeartbeat = 5 * time.Second

// sweepEvery is how often a window check asks every replica again.
const sweepEvery = time.Second

// held is what one Stargate replica held when asked.
type held struct {
	Region, Pod, IP string
	Ready           bool
	// Registrations are the inference server ids in its registry.
	Registrations []string
	// Tunnels are the ids with a live reverse tunnel to it.
	Tunnels []string
	// Accepted counts the tunnel handshakes it accepted, by id.
	Accepted map[string]int
	// Registers counts the RegisterInferenceServer calls it received.
	Registers int64
	// Probed counts them by the probe id they carried (the harness's own
	// rogue registrations): the routing checks compare these, so cases
	// that run at the same time do not see each other's calls.
	Probed map[string]int64
	// Heartbeat is the registration heartbeat it announces.
	Heartbeat time.Duration
	doc       Doc
	// Source is what it was read from: ProofStatus (the fields above), or
	// ProofMetrics (a real Stargate: only Active and Listed).
	Source ProofLevel
	// Active is stargate_active_inference_servers by model, Listed the
	// models ListModels lists (ProofMetrics).
	Active map[string]float64
	Listed []string
}

func (h held) name() string { return h.Region + "/" + h.Pod }

// stargateDoc is the part of the reference Stargate's /status the checks
// read (a real image needs a status shim serving the same fields).
type stargateDoc struct {
	InferenceServers *[]struct {
		ID string `json:"id"`
	} `json:"inference_servers"`
	HeartbeatMS int64 `json:"registration_heartbeat_ms"`
	Requests    map[string]struct {
		Total   int64            `json:"total"`
		ByProbe map[string]int64 `json:"by_probe"`
	} `json:"requests"`
	Extra struct {
		ReverseTunnel *struct {
			Sessions   []string `json:"sessions"`
			Handshakes struct {
				AcceptedByID map[string]int `json:"accepted_by_id"`
			} `json:"handshakes"`
		} `json:"reverse_tunnel"`
	} `json:"extra"`
}

// readHeld reads a replica's /status document.
func readHeld(region string, p Pod, d Doc) (held, error) {
	h := held{Region: region, Pod: p.Name, IP: p.IP, Ready: p.Ready, doc: d, Heartbeat: defaultHeartbeat, Source: ProofStatus}
	raw, err := json.Marshal(d.v)
	if err != nil {
		return h, err
	}
	var s stargateDoc
	if err := json.Unmarshal(raw, &s); err != nil {
		return h, fmt.Errorf("Stargate %s/%s: /status: %w", region, p.Name, err)
	}
	var missing []string
	if s.InferenceServers == nil {
		missing = append(missing, "inference_servers")
	}
	if s.Requests == nil {
		missing = append(missing, "requests (per-method RPC counts)")
	}
	if s.Extra.ReverseTunnel == nil {
		missing = append(missing, "extra.reverse_tunnel")
	}
	if len(missing) > 0 {
		return h, fmt.Errorf("Stargate %s/%s: /status lacks %s, so the server side cannot be proven (serve them, or put a status shim in front of the image)",
			region, p.Name, strings.Join(missing, ", "))
	}
	for _, is := range *s.InferenceServers {
		h.Registrations = append(h.Registrations, is.ID)
	}
	h.Tunnels = slices.Sorted(slices.Values(s.Extra.ReverseTunnel.Sessions))
	h.Accepted = s.Extra.ReverseTunnel.Handshakes.AcceptedByID
	h.Registers = s.Requests["RegisterInferenceServer"].Total
	h.Probed = s.Requests["RegisterInferenceServer"].ByProbe
	if s.HeartbeatMS > 0 {
		h.Heartbeat = time.Duration(s.HeartbeatMS) * time.Millisecond
	}
	return h, nil
}

// askStargates asks every Stargate pod of every region what it holds:
// every ready one, every one of e.mustAnswer (terminating or not), and
// every other one that answers (other terminating pods and pods without an
// IP are left out). It reads /status, or, when the run's proofs come from a
// real Stargate's sources, /metrics and ListModels (readActive).
func (e *Env) askStargates(ctx context.Context) ([]held, error) {
	var out []held
	for _, r := range e.Regions() {
		pods, err := e.Pods(ctx, r, deploy.StargateSelector().String())
		if err != nil {
			return nil, err
		}
		if pods, err = e.withTerminatingMustAnswer(ctx, r, pods); err != nil {
			return nil, err
		}
		for _, p := range pods {
			if p.IP == "" {
				continue
			}
			h, err := e.askStargate(ctx, r, p)
			if err != nil && !p.Ready && !slices.Contains(e.mustAnswer, r+"/"+p.Name) {
				continue // starting or stopping: it serves nothing yet
			}
			if err != nil {
				return nil, fmt.Errorf("ask Stargate %s/%s: %w", r, p.Name, err)
			}
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no Stargate pod with an IP in any region")
	}
	for _, name := range e.mustAnswer {
		if _, ok := findHeld(out, name); !ok {
			return nil, fmt.Errorf("the Stargate %s, which must answer, is gone or has no IP", name)
		}
	}
	return out, nil
}

// withTerminatingMustAnswer adds to pods (region's, from Pods, which
// leaves deleted pods out) each pod of e.mustAnswer in region that Pods
// left out: a deleted Stargate that a case holds inside its termination
// window (WithTerminatingStargate) serves on, and a request routed to it
// must show.
func (e *Env) withTerminatingMustAnswer(ctx context.Context, region string, pods []Pod) ([]Pod, error) {
	for _, named := range e.mustAnswer {
		r, name, _ := strings.Cut(named, "/")
		if r != region || slices.ContainsFunc(pods, func(p Pod) bool { return p.Name == name }) {
			continue
		}
		cs, err := e.Kube(region)
		if err != nil {
			return nil, err
		}
		kp, err := cs.CoreV1().Pods(e.Deployed.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("Stargate %s, which must answer: %w", named, err)
		}
		pods = append(pods, Pod{Name: kp.Name, IP: kp.Status.PodIP, Ready: podReady(*kp)})
	}
	return pods, nil
}

// askStargate reads what one Stargate pod holds, from the run's source.
func (e *Env) askStargate(ctx context.Context, region string, p Pod) (held, error) {
	if byMetrics(e.Config) {
		return e.readActive(ctx, region, p)
	}
	d, err := e.StargateStatus(ctx, p)
	if err != nil {
		return held{}, err
	}
	return readHeld(region, p, d)
}

// snapshot asks every Stargate before an attempt, for the counters the
// checks compare with; its failure is a step's failure.
func (e *Env) snapshot(ctx context.Context) ([]held, error) {
	hs, err := e.askStargates(ctx)
	return hs, stepFailed("ask every Stargate before the attempt", err)
}

// absence is what a refusal must leave on the server side.
type absence struct {
	// id is the inference server id no replica may hold.
	id string
	// before are the replicas' counters before the attempt (required).
	before []held
	// registeredOn names the replica ("region/pod") where id may hold a
	// registration (a quic case's good registration whose tunnel is
	// refused); empty: nowhere.
	registeredOn string
	// routed also requires that no replica received a registration
	// call of id since before (a refused :authority reaches no replica).
	routed bool
	// model is the model only id announces (probeModel of a rogue
	// registration), empty when id shares its models: a real Stargate's
	// sources count by model.
	model string
	// shared is a model id announces with others (a Pylon variant's):
	// on a real Stargate's sources its count of active servers may not
	// rise above the count before.
	shared string
}

// claims are what a proves, at the level source reads it.
func (a absence) claims(source ProofLevel) []claim {
	if source == ProofStatus {
		cs := []claim{{what: "registrations, reverse tunnels, accepted tunnel handshakes and any other mention of " + a.id, level: ProofStatus, how: "/status"}}
		if a.routed {
			cs = append(cs, claim{what: "RegisterInferenceServer calls of " + a.id, level: ProofStatus, how: "/status requests.RegisterInferenceServer.by_probe"})
		}
		return cs
	}
	var cs []claim
	switch {
	case a.model != "":
		cs = append(cs, claim{what: "an active registration (registration with its reverse tunnel up) of " + a.id + " as model " + a.model, level: ProofMetrics,
			how: activeMetricsNote + "; the probe holds an accepted tunnel open and answers its health checks, so a handshake a Stargate accepted for a registered id turns it active here, but one accepted for an id registered nowhere leaves nothing to count"})
	case a.shared != "":
		cs = append(cs, claim{what: "no more active servers of model " + a.shared + " (which " + a.id + " shares) on any replica than before", level: ProofMetrics, how: activeMetricsNote})
	default:
		cs = append(cs, claim{what: "registrations and reverse tunnels of " + a.id, level: ProofNone,
			how: "a real Stargate counts by model, and " + a.id + " shares its models"})
	}
	cs = append(cs, claim{what: "accepted tunnel handshakes of " + a.id, level: ProofNone, how: "a real Stargate exposes no count of them"})
	if a.routed {
		cs = append(cs, claim{what: "RegisterInferenceServer calls of " + a.id, level: ProofNone, how: "a real Stargate exposes no count of them"})
	}
	return cs
}

func (a absence) String() string {
	var what []string
	if a.registeredOn == "" {
		what = append(what, "no registration of "+a.id+" on any Stargate replica")
	} else {
		what = append(what, "the registration of "+a.id+" on "+a.registeredOn+" only")
	}
	what = append(what, "no reverse tunnel or accepted tunnel handshake of "+a.id+" anywhere")
	if a.routed {
		what = append(what, "no RegisterInferenceServer call of "+a.id+" reaching any replica")
	}
	return strings.Join(what, "; ")
}

// window is how long a refusal is watched on the server side: at least
// three heartbeat periods of the slowest replica (after which a lingering
// registration would have expired, and within which a retry would have
// landed), plus half a period, longer under a time scale above 1.
func (e *Env) window(hs []held) (time.Duration, time.Duration) {
	hb := defaultHeartbeat
	for i, h := range hs {
		if i == 0 || h.Heartbeat > hb {
			hb = h.Heartbeat
		}
	}
	w := 3*hb + hb/2
	return max(w, e.Scale(w)), hb
}

// heldNowhere proves a refusal on the server side: for the window after
// it, every replica of every region is asked every second and when the
// window closes, and none may
// hold what a.String() excludes. A violation is a plain error (no typed
// reason), so the case fails even though a client saw a refusal; a
// failure to ask is a step's failure.
func (e *Env) heldNowhere(ctx context.Context, a absence) error {
	win, hb := e.window(a.before)
	start := time.Now()
	// Every second, and once more the moment the window closes.
	next := time.NewTimer(min(sweepEvery, win))
	defer next.Stop()
	rec := serverRecord{check: a.String(), start: start, before: a.before, id: a.id, model: a.model,
		window: fmt.Sprintf("%s (3 heartbeats of %s and half a period, at least)", win.Round(time.Millisecond), hb)}
	rec.claims = a.claims(sourceOf(a.before))
	if weakest(rec.claims) == ProofNone && !slices.ContainsFunc(rec.claims, func(c claim) bool { return c.level != ProofNone }) {
		rec.verdict = "NOT PROVEN: nothing this Stargate exposes can prove it; the client's refusal stands alone"
		e.recordServerSide(rec)
		return nil
	}
	for {
		now, err := e.askStargates(ctx)
		if err != nil {
			rec.verdict = "could not ask: " + err.Error()
			e.recordServerSide(rec)
			return stepFailed("ask every Stargate after the refusal", err)
		}
		rec.sweeps++
		rec.last = now
		if v := a.violations(now); len(v) > 0 {
			err := fmt.Errorf("server side, %s after the refusal: %s", time.Since(start).Round(time.Millisecond), strings.Join(v, "; "))
			rec.verdict = "VIOLATED: " + err.Error()
			e.recordServerSide(rec)
			return err
		}
		if time.Since(start) >= win {
			rec.verdict = "holds"
			e.recordServerSide(rec)
			return nil
		}
		select {
		case <-ctx.Done():
			rec.verdict = "cut short: " + ctx.Err().Error()
			e.recordServerSide(rec)
			return stepFailed("watch the Stargates after the refusal", ctx.Err())
		case <-next.C:
			next.Reset(min(sweepEvery, max(win-time.Since(start), 0)))
		}
	}
}

// violations lists what the replicas hold that a excludes.
func (a absence) violations(now []held) []string {
	var out []string
	for _, h := range now {
		b, known := findHeld(a.before, h.name())
		if h.Source != ProofStatus {
			// An active registration needs its tunnel: it may show
			// nowhere, not even where the registration stands.
			if ok, lvl := h.activeHere(a.model); a.model != "" && ok {
				out = append(out, fmt.Sprintf("Stargate %s serves model %s of %s (%s: an active registration with its tunnel up)", h.name(), a.model, a.id, lvl))
			}
			if n := h.Active[a.shared] - b.Active[a.shared]; a.shared != "" && known && n > 0 {
				out = append(out, fmt.Sprintf("Stargate %s has %g more active server(s) of model %s (which %s shares) than before", h.name(), n, a.shared, a.id))
			}
			continue
		}
		found := len(out)
		if slices.Contains(h.Registrations, a.id) && h.name() != a.registeredOn {
			out = append(out, fmt.Sprintf("Stargate %s holds a registration of %s", h.name(), a.id))
		}
		if slices.Contains(h.Tunnels, a.id) {
			out = append(out, fmt.Sprintf("Stargate %s holds a reverse tunnel of %s", h.name(), a.id))
		}
		if n := h.Accepted[a.id] - b.Accepted[a.id]; n > 0 {
			out = append(out, fmt.Sprintf("Stargate %s accepted %d tunnel handshake(s) of %s", h.name(), n, a.id))
		}
		// Any other mention (a field the checks above do not read).
		if len(out) == found && h.name() != a.registeredOn && h.doc.Mentions(a.id) {
			out = append(out, fmt.Sprintf("Stargate %s's /status mentions %s: %s", h.name(), a.id, h.doc))
		}
		if n := h.Probed[a.id] - b.Probed[a.id]; a.routed && known && n > 0 {
			out = append(out, fmt.Sprintf("Stargate %s received %d RegisterInferenceServer call(s) of %s since before the attempt", h.name(), n, a.id))
		}
	}
	return out
}

func findHeld(hs []held, name string) (held, bool) {
	for _, h := range hs {
		if h.name() == name {
			return h, true
		}
	}
	return held{}, false
}

// presence is where an accepted registration must land.
type presence struct {
	id string
	// on are the replicas ("region/pod") that must hold it, and no other;
	// nil means every ready replica of every region.
	on []string
	// before, when set, also requires a RegisterInferenceServer call of
	// id to have reached exactly the replicas on since then (routing).
	before []held
	// tunnel requires an accepted tunnel handshake of id on exactly on
	// (since before) instead of a registration.
	tunnel bool
	// model is the model only id announces (see absence.model).
	model string
	// shared is a model id announces with others (a Pylon's); on a real
	// Stargate's sources a replica holds id when it has more active
	// servers of it than in base (when set), else at least one.
	shared string
	base   []held
}

// claims are what p proves, at the level source reads it.
func (p presence) claims(source ProofLevel) []claim {
	if source == ProofStatus {
		cs := []claim{{what: p.what(), level: ProofStatus, how: "/status"}}
		if p.before != nil && !p.tunnel {
			cs = append(cs, claim{what: "RegisterInferenceServer calls of " + p.id, level: ProofStatus, how: "/status requests.RegisterInferenceServer.by_probe"})
		}
		return cs
	}
	var cs []claim
	switch {
	case p.model == "" && p.shared != "" && p.base != nil:
		cs = append(cs, claim{what: "one more active server of model " + p.shared + " (which " + p.id + " shares) than before", level: ProofMetrics, how: activeMetricsNote})
	case p.model == "" && p.shared != "":
		cs = append(cs, claim{what: "an active server of model " + p.shared + " (which " + p.id + " shares)", level: ProofMetrics,
			how: activeMetricsNote + "; by model only: any other server of the model satisfies it too"})
	case p.model == "":
		cs = append(cs, claim{what: p.what(), level: ProofNone, how: "a real Stargate counts by model, and " + p.id + " shares its models"})
	case p.tunnel:
		cs = append(cs, claim{what: "an active registration of " + p.id + " as model " + p.model + ", which needs its reverse tunnel up on that replica (the probe holds it open and answers the health checks)", level: ProofMetrics,
			how: activeMetricsNote + "; a real Stargate counts no handshakes, but admits a tunnel only where the id is registered, and turns the registration active only once the tunnel's health checks pass"})
	default:
		cs = append(cs, claim{what: p.what(), level: ProofNone, how: "a registration shows on a real Stargate only once its reverse tunnel is up, and this one has none"})
	}
	if p.before != nil && !p.tunnel {
		cs = append(cs, claim{what: "RegisterInferenceServer calls of " + p.id, level: ProofNone, how: "a real Stargate exposes no count of them"})
	}
	return cs
}

func (p presence) what() string {
	if p.tunnel {
		return "an accepted tunnel handshake of " + p.id
	}
	return "a registration of " + p.id
}

func (p presence) String() string {
	where := "every ready Stargate replica of every region"
	if p.on != nil {
		where = strings.Join(p.on, ", ")
	}
	what := "a registration of " + p.id
	if p.tunnel {
		what = "an accepted tunnel handshake of " + p.id
	}
	s := what + " on exactly " + where
	if p.before != nil && !p.tunnel {
		s += ", reached by a RegisterInferenceServer call of " + p.id + " there and nowhere else"
	}
	return s
}

// heldExactlyOn waits (waitStatus, or waitConverge for every replica)
// until p holds on the server side, and records the proof. A mismatch at
// the deadline is a plain error, so the case fails.
func (e *Env) heldExactlyOn(ctx context.Context, p presence) error {
	rec := serverRecord{check: p.String(), start: time.Now(), before: p.before, id: p.id, model: p.model}
	source := sourceOf(p.before)
	if source == "" {
		source = ProofStatus
		if byMetrics(e.Config) {
			source = ProofMetrics
		}
	}
	rec.claims = p.claims(source)
	if !slices.ContainsFunc(rec.claims, func(c claim) bool { return c.level != ProofNone }) {
		rec.verdict = "NOT PROVEN: nothing this Stargate exposes can prove it; the client's view stands alone"
		e.recordServerSide(rec)
		return nil
	}
	d := waitStatus
	if p.on == nil {
		d = waitConverge
	}
	rec.window = "until it holds, at most " + e.Scale(d).String()
	// asked is the last failure to ask, unless a sweep was cut short by
	// the wait's deadline: that says less than the mismatch before it,
	// which must fail the case rather than turn it into an Error.
	var asked error
	compared := false
	err := e.Eventually(ctx, p.String(), d, func(ctx context.Context) error {
		now, err := e.askStargates(ctx)
		if err != nil {
			if !compared || !nearDeadline(ctx) {
				asked = err
			}
			return err
		}
		want := p.on
		if want == nil {
			want = readyOf(now)
		}
		asked, compared = nil, true
		rec.sweeps++
		rec.last = now
		return p.mismatch(now, want)
	})
	switch {
	case err == nil:
		rec.verdict = "holds"
	case asked != nil:
		rec.verdict = "could not ask: " + asked.Error()
		err = stepFailed("ask every Stargate", err)
	default:
		rec.verdict = "VIOLATED: " + err.Error()
		err = fmt.Errorf("server side: %w", err)
	}
	e.recordServerSide(rec)
	return err
}

// mismatch says how the replicas differ from p (with want the replicas
// that must hold it), or nil.
func (p presence) mismatch(now []held, want []string) error {
	var has, reached []string
	for _, h := range now {
		b, _ := findHeld(p.before, h.name())
		if h.Source != ProofStatus {
			switch {
			case p.model != "":
				if ok, _ := h.activeHere(p.model); ok {
					has = append(has, h.name())
				}
			case p.base != nil:
				if bb, known := findHeld(p.base, h.name()); known && h.Active[p.shared] > bb.Active[p.shared] {
					has = append(has, h.name())
				}
			case h.Active[p.shared] >= 1:
				has = append(has, h.name())
			}
			continue
		}
		if p.tunnel {
			if h.Accepted[p.id] > b.Accepted[p.id] {
				has = append(has, h.name())
			}
			continue
		}
		if slices.Contains(h.Registrations, p.id) {
			has = append(has, h.name())
		}
		if _, known := findHeld(p.before, h.name()); known && h.Probed[p.id] > b.Probed[p.id] {
			reached = append(reached, h.name())
		}
	}
	what := "replicas holding a registration of " + p.id
	if p.tunnel {
		what = "replicas that accepted a tunnel handshake of " + p.id
	}
	if len(now) > 0 && now[0].Source != ProofStatus {
		what = "replicas serving model " + p.model + " of " + p.id + " (an active registration, its tunnel up)"
		if p.model == "" {
			what = "replicas with an active server of model " + p.shared + " (which " + p.id + " shares)"
			if p.base != nil {
				what = "replicas with one more active server of model " + p.shared + " (which " + p.id + " shares) than before"
			}
		}
	}
	if err := expectSet(what, want, has); err != nil {
		return err
	}
	if p.before != nil && !p.tunnel && (len(now) == 0 || now[0].Source == ProofStatus) {
		return expectSet("replicas that received a RegisterInferenceServer call of "+p.id, want, reached)
	}
	return nil
}

// readyOf names the ready replicas among hs.
func readyOf(hs []held) []string {
	var out []string
	for _, h := range hs {
		if h.Ready {
			out = append(out, h.name())
		}
	}
	return out
}

// serverRecord is one server-side check, as the evidence shows it.
type serverRecord struct {
	check, window, verdict, id, model string
	start                             time.Time
	sweeps                            int
	before, last                      []held
	// claims are the check's parts, each with its proof level.
	claims []claim
}

// sourceOf is the source hs were read from ("" for none).
func sourceOf(hs []held) ProofLevel {
	if len(hs) == 0 {
		return ""
	}
	return hs[0].Source
}

// recordServerSide appends rec to the case's server-side.txt.
func (e *Env) recordServerSide(rec serverRecord) {
	var b strings.Builder
	end := time.Now()
	level := weakest(rec.claims)
	e.noteProof(rec.check, level)
	fmt.Fprintf(&b, "== %s\n", rec.check)
	fmt.Fprintf(&b, "proof:   %s (the weakest of its claims)\n", level)
	for _, c := range rec.claims {
		fmt.Fprintf(&b, "  - %s\n", c)
	}
	var asked []string
	for _, h := range rec.last {
		asked = append(asked, fmt.Sprintf("%s (%s)", h.name(), h.IP))
	}
	fmt.Fprintf(&b, "asked:   every Stargate pod of every region: %s\n", strings.Join(asked, ", "))
	fmt.Fprintf(&b, "window:  %s .. %s (%s; %s), %d sweep(s)\n", rec.start.UTC().Format("15:04:05.000"), end.UTC().Format("15:04:05.000"),
		end.Sub(rec.start).Round(time.Millisecond), rec.window, rec.sweeps)
	fmt.Fprintf(&b, "held at the last sweep:\n")
	for _, h := range rec.last {
		bh, known := findHeld(rec.before, h.name())
		calls := fmt.Sprintf("%d of %s, %d in all", h.Probed[rec.id], rec.id, h.Registers)
		if known {
			calls = fmt.Sprintf("%d of %s (before %d), %d in all (before %d)", h.Probed[rec.id], rec.id, bh.Probed[rec.id], h.Registers, bh.Registers)
		}
		name := h.name()
		if !h.Ready {
			name += " (not ready)"
		}
		if h.Source != ProofStatus {
			fmt.Fprintf(&b, "  %-28s %s=%v ListModels=%v\n", name, status.MetricActiveInferenceServers, h.Active, h.Listed)
			continue
		}
		fmt.Fprintf(&b, "  %-28s registrations=%v tunnels=%v accepted(%s)=%d RegisterInferenceServer calls=%s\n",
			name, h.Registrations, h.Tunnels, rec.id, h.Accepted[rec.id], calls)
	}
	fmt.Fprintf(&b, "verdict: %s\n\n", rec.verdict)
	if err := os.MkdirAll(e.Evidence, 0o755); err != nil {
		e.Log.Warn("server-side evidence", "err", err)
		return
	}
	f, err := os.OpenFile(filepath.Join(e.Evidence, "server-side.txt"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		e.Log.Warn("server-side evidence", "err", err)
		return
	}
	defer f.Close()
	_, _ = f.WriteString(b.String())
}
