package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/internal/atomicfile"
	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// The campaign engine: it deploys the campaign's Pylons beside the cell's
// base one, waits for them to converge, then injects the schedule's faults
// at their offsets while it checks the invariants all the time: every
// checkEvery it asks every Stargate what it holds and every ingress what
// handshakes it completed (I1, I2, I4), and every invokeEvery it invokes
// the echo model through a region and checks which worker answered (I3).
// At the end it removes the campaign's Pylons and checks that every
// Stargate lets them go (I4).

const (
	checkEvery  = 2 * time.Second
	invokeEvery = 3 * time.Second
	// invokeDeadline is an invocation's deadline: one that has no answer
	// by then hangs (I3).
	invokeDeadline = 20 * time.Second
	// leaseBound is how long a Stargate may hold a gone Pylon (I4): a
	// registration lapses after three missed heartbeats (1 s each in the
	// manifests) and a tunnel after its idle timeout; with room.
	leaseBound = 20 * time.Second
	// campaignPrefix names the campaign's Pylon variants.
	campaignPrefix = "camp-"
)

// campaignRun is one run of a schedule.
type campaignRun struct {
	w  *World
	e  *Env
	cc catalog.CampaignConfig
	s  campaign.Schedule

	start time.Time
	// pylons and bad are the variant names of the good and the bad-trust
	// campaign Pylons; ids their inference server ids.
	pylons, bad []string
	ids         map[string]string
	// regions are the topology's Stargate regions, each of which must
	// have a ready Stargate to converge.
	regions []string
	// baseline is what every Stargate held before the campaign Pylons
	// came (the base Pylon): what they must hold again once those leave.
	baseline []string
	// base are the inference server ids of the cell's own Pylons, which
	// may answer invocations as the campaign's may (I3).
	base []string
	// tunnels says every Stargate held a tunnel of every campaign Pylon at
	// the baseline, so convergence asks for the tunnels too.
	tunnels bool

	mu  sync.Mutex
	res campaign.Result
	// active holds the faults on now, healed when each healed.
	active map[int]bool
	healed time.Time
	// gone holds the campaign Pylons a pylon-leave fault removed, since when.
	gone map[string]time.Time
	// ingressBefore holds each ingress pod's foreign_sni counts when the
	// schedule began, by pod UID; a pod not in it counts from zero.
	ingressBefore map[string]map[string]int
	// seen dedupes violations: one per invariant and key.
	seen map[string]bool
}

// RunCampaign runs the schedule of cc on w and returns what it found; an
// engine failure is Result.Error (no verdict), never a panic.
func RunCampaign(ctx context.Context, w *World, cc catalog.CampaignConfig) (res campaign.Result) {
	c := &campaignRun{w: w, cc: cc, ids: map[string]string{}, active: map[int]bool{}, gone: map[string]time.Time{}, seen: map[string]bool{}}
	c.res.Checks = map[campaign.Invariant]int{}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		res = c.res
		res.Pylons, res.BadPylons = c.idsOf(c.pylons), c.idsOf(c.bad)
		if !c.start.IsZero() {
			res.Started = c.start
		}
	}()
	if err := c.run(ctx); err != nil {
		c.mu.Lock()
		c.res.Error = err.Error()
		c.mu.Unlock()
	}
	return
}

func (c *campaignRun) run(ctx context.Context) (err error) {
	s, err := campaign.Read(c.cc.Schedule)
	if err != nil {
		return err
	}
	c.s, c.res.Schedule = s, s
	if byMetrics(c.w.Config) {
		return errors.New("a campaign proves its invariants on the server side from each Stargate's /status; a real Stargate serves none (run it on the reference Stargate)")
	}
	dep, err := c.w.Use(ctx, c.cc.Cell)
	if err != nil {
		return err
	}
	evidence := filepath.Join(c.w.Config.Artifacts, "campaign")
	c.e = c.w.Env(dep, evidence)
	c.regions = c.e.Regions()
	if err := c.removeLeftovers(ctx); err != nil {
		return err
	}
	hs, err := c.e.askStargates(ctx)
	if err != nil {
		return fmt.Errorf("ask every Stargate before the campaign: %w", err)
	}
	c.baseline = heldIDs(hs)
	for _, cr := range dep.Clusters {
		for _, p := range cr.Pylons {
			c.base = append(c.base, manifests.Pylon{Name: p}.ServerID())
		}
	}
	defer func() {
		// The campaign's Pylons go, whatever happened; I4 checks they are let go.
		err = errors.Join(err, c.leave(context.WithoutCancel(ctx)))
	}()
	if err := c.deployPylons(ctx); err != nil {
		return err
	}
	c.ingressBefore = map[string]map[string]int{}
	for _, in := range c.e.ingressDocs(ctx) {
		c.ingressBefore[string(in.pod.UID)] = in.doc.Counts("foreign_sni")
	}
	c.say("the schedule starts: %d faults over %s, then %s to settle", len(s.Faults), s.Duration, s.Settle)
	c.start = time.Now()
	c.healed = c.start
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, f := range s.Faults {
		wg.Go(func() { c.inject(cctx, f) })
	}
	wg.Go(func() { c.invoke(cctx) })
	end := c.start.Add(s.Window().D())
	t := time.NewTicker(checkEvery)
	defer t.Stop()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			cancel()
			wg.Wait()
			return fmt.Errorf("campaign cut at %s: %w", c.at(), context.Cause(ctx))
		case <-t.C:
		}
		c.check(ctx, false)
	}
	cancel()
	wg.Wait()
	c.check(ctx, true)
	c.mu.Lock()
	c.res.Ended = c.at()
	c.mu.Unlock()
	if c.cc.Scale {
		c.measureRollout(ctx)
	}
	return nil
}

// say prints a progress line (the runner shows the suite's output live).
func (c *campaignRun) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !c.start.IsZero() {
		msg = "t+" + c.at().String() + " " + msg
	}
	fmt.Println("campaign: " + msg)
	c.w.Log.Info(msg, "component", "campaign")
}

// at is the offset from the campaign's start, to the tenth of a second.
func (c *campaignRun) at() campaign.Span {
	return campaign.Span(time.Since(c.start).Round(100 * time.Millisecond))
}

func (c *campaignRun) idsOf(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, c.ids[n])
	}
	return out
}

// pick chooses a good campaign Pylon for a fault, by its id.
func (c *campaignRun) pick(n int) string { return c.pylons[n%len(c.pylons)] }

// removeLeftovers deletes campaign Pylons a killed earlier campaign left.
func (c *campaignRun) removeLeftovers(ctx context.Context) error {
	cs, err := c.e.Kube(c.e.Workers())
	if err != nil {
		return err
	}
	list, err := cs.AppsV1().Deployments(c.e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: manifests.VariantLabel})
	if err != nil {
		return fmt.Errorf("list Pylon variants: %w", err)
	}
	for _, d := range list.Items {
		name := d.Labels[manifests.VariantLabel]
		if !strings.HasPrefix(name, campaignPrefix) {
			continue
		}
		c.say("removing campaign Pylon %s left by an earlier campaign", name)
		if err := c.e.deployer.DeletePylonVariant(ctx, name); err != nil {
			return fmt.Errorf("remove leftover campaign Pylon %s: %w", name, err)
		}
	}
	return nil
}

// applyPylon deploys one campaign Pylon; a bad one trusts only an
// unrelated CA, so it must never register.
func (c *campaignRun) applyPylon(ctx context.Context, name string, bad bool) (*deploy.Variant, error) {
	var o deploy.PylonOverrides
	if bad {
		o.TrustConfigMap = pki.ConfigMapName(pki.BundleUnrelated)
		o.CustomTrustConfigMap = pki.ConfigMapName(pki.BundleUnrelated)
	}
	v, err := c.e.deployer.ApplyPylonVariant(ctx, name, o)
	if err != nil {
		return nil, fmt.Errorf("deploy campaign Pylon %s: %w", name, err)
	}
	return v, nil
}

// deployPylons deploys every campaign Pylon at once and waits until the
// good ones converge: the baseline every check compares with.
func (c *campaignRun) deployPylons(ctx context.Context) error {
	// Each run's Pylons have ids of their own: a Stargate that kept an
	// earlier run's registration (a leak that run reported) must not be
	// able to hold this run's Pylons, nor refuse them as taken.
	run := strings.TrimPrefix(uniqueID(""), "-")[:4]
	for i := range max(c.cc.Pylons, 1) {
		c.pylons = append(c.pylons, campaignPrefix+run+"-"+strconv.Itoa(i+1))
	}
	for i := range c.cc.BadPylons {
		c.bad = append(c.bad, campaignPrefix+run+"-bad-"+strconv.Itoa(i+1))
	}
	c.say("deploying %d campaign Pylons and %d bad-trust ones", len(c.pylons), len(c.bad))
	before, _ := c.e.askStargates(ctx)
	start := time.Now()
	all := append(slices.Clone(c.pylons), c.bad...)
	vs := make([]*deploy.Variant, len(all))
	if err := eachPylon(all, func(i int, name string) (err error) {
		vs[i], err = c.applyPylon(ctx, name, i >= len(c.pylons))
		return err
	}); err != nil {
		return err
	}
	for i, name := range all {
		c.ids[name] = vs[i].InferenceServerID
	}
	bound := c.w.Scale(max(c.s.Settle.D(), 90*time.Second) + time.Duration(len(c.pylons))*2*time.Second)
	var hs []held
	err := c.e.Eventually(ctx, "every campaign Pylon to register with every Stargate", bound, func(ctx context.Context) error {
		var err error
		if hs, err = c.e.askStargates(ctx); err != nil {
			return err
		}
		if missing := c.missing(hs, false); len(missing) > 0 {
			return fmt.Errorf("not yet held: %s", summarize(missing, 6))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("the campaign's Pylons never converged before the first fault (no verdict): %w", err)
	}
	took := time.Since(start)
	// Tunnels are asked for where the Pylons open them to every Stargate
	// (a build may open them on demand): settled here, shortly.
	c.tunnels = c.e.Eventually(ctx, "every campaign Pylon's tunnel to every Stargate", c.w.Scale(30*time.Second), func(ctx context.Context) error {
		hs, err := c.e.askStargates(ctx)
		if err == nil && len(c.missing(hs, true)) > 0 {
			err = errors.New(summarize(c.missing(hs, true), 4))
		}
		return err
	}) == nil
	c.say("%d Pylons held by %d Stargates after %s (tunnels to all: %t)", len(c.pylons), len(hs), took.Round(100*time.Millisecond), c.tunnels)
	if c.cc.Scale {
		c.res.Scale = &campaign.Scale{Pylons: len(c.pylons), ColdRegistration: campaign.Span(took.Round(100 * time.Millisecond))}
		if n := registers(hs) - registers(before); n > 0 && took > 0 {
			c.res.Scale.RegistersPerSecond = float64(n) / took.Seconds()
		}
		c.res.Scale.Refusals = c.refusals(ctx)
	}
	return nil
}

// eachPylon runs fn for every Pylon name, eight at a time (each waits on
// its pods, so more overlap well, but hundreds would crowd the API server),
// and joins their errors.
func eachPylon(names []string, fn func(i int, name string) error) error {
	errs := make([]error, len(names))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = fn(i, name)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// missing lists "stargate: id" for each good campaign Pylon (not gone) a
// ready Stargate does not hold (and, with tunnels, has no tunnel from).
func (c *campaignRun) missing(hs []held, tunnels bool) []string {
	c.mu.Lock()
	gone := maps.Clone(c.gone)
	c.mu.Unlock()
	return c.missingOf(hs, tunnels, gone)
}

// missingOf is missing with the gone Pylons given (for a caller holding c.mu).
func (c *campaignRun) missingOf(hs []held, tunnels bool, gone map[string]time.Time) []string {
	var out []string
	// A region with no ready Stargate holds nothing: never a vacuous pass.
	for _, r := range c.regions {
		if !slices.ContainsFunc(hs, func(h held) bool { return h.Region == r && h.Ready }) {
			out = append(out, "region "+r+" has no ready Stargate")
		}
	}
	for _, h := range hs {
		if !h.Ready {
			continue
		}
		for _, p := range c.pylons {
			if _, ok := gone[p]; ok {
				continue
			}
			id := c.ids[p]
			if !slices.Contains(h.Registrations, id) {
				out = append(out, h.name()+" lacks the registration of "+id)
			} else if tunnels && !slices.Contains(h.Tunnels, id) {
				out = append(out, h.name()+" lacks the tunnel of "+id)
			}
		}
	}
	return out
}

// inject runs one scheduled fault: waits for its start, injects it, waits
// its duration, undoes it, and records when it was on.
func (c *campaignRun) inject(ctx context.Context, f campaign.Fault) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(c.start.Add(f.Start.D()))):
	}
	ap := campaign.Applied{ID: f.ID}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.active, f.ID)
		if ap.Healed > 0 {
			c.healed = time.Now()
		}
		c.res.Applied = append(c.res.Applied, ap)
		sort.Slice(c.res.Applied, func(i, j int) bool { return c.res.Applied[i].ID < c.res.Applied[j].ID })
	}()
	// A fault that never went on keeps Injected and Healed at zero (the
	// reports draw it as a failed injection).
	cf, err := c.makeFault(ctx, f)
	if err != nil {
		ap.Error = "make: " + err.Error()
		c.say("fault #%d (%s %s) not injected: %v", f.ID, f.Kind, f.Target, err)
		return
	}
	c.mu.Lock()
	c.active[f.ID] = true
	c.mu.Unlock()
	ap.Injected = c.at()
	c.say("fault #%d on: %s %s for %s", f.ID, f.Kind, f.Target, f.Duration)
	var h *faults.Handle
	if cf.Fault != nil {
		cf.Fault.Duration = 0 // the campaign undoes it, so the heal is on its clock
		if h, err = faults.Start(ctx, *cf.Fault, c.w.recorder); err != nil {
			ap.Injected, ap.Error = 0, "inject: "+err.Error()
			c.say("fault #%d failed to inject: %v", f.ID, err)
			return
		}
	} else if cf.on != nil {
		if err := cf.on(ctx); err != nil {
			ap.Injected, ap.Error = 0, "inject: "+err.Error()
			c.say("fault #%d failed to inject: %v", f.ID, err)
			return
		}
	}
	if cf.leaving != "" {
		c.mu.Lock()
		c.gone[cf.leaving] = time.Now()
		c.mu.Unlock()
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(c.start.Add(f.End().D()))):
	}
	uctx := context.WithoutCancel(ctx)
	var uerr error
	switch {
	case h != nil:
		uerr = h.Stop(uctx)
		ap.Effect = h.Effect()
		if n := h.Accepted(); n > 0 {
			// I2: a client went on in plaintext through the downgrade.
			c.mu.Lock()
			c.sample(campaign.FailClosed, c.at(), false, fmt.Sprintf("fault #%d: %d clients spoke plaintext", f.ID, n))
			c.violate(campaign.FailClosed, fmt.Sprintf("downgrade-%d", f.ID), c.at(),
				fmt.Sprintf("%d clients went on in plaintext HTTP/2 through fault #%d's downgrade of %s", n, f.ID, f.Target), ap.Effect, c.activeIDs())
			c.mu.Unlock()
		}
	case cf.off != nil:
		uerr = cf.off(uctx)
	}
	if f.Kind == campaign.Rollout {
		// A rollout heals when every region's workload has rolled out.
		uerr = errors.Join(uerr, c.e.Eventually(uctx, "the Stargates of "+f.Target+" to roll out", c.w.Scale(3*time.Minute), func(ctx context.Context) error {
			ok, err := c.e.stargatesRolledOut(ctx, f.Target)
			if err == nil && !ok {
				err = errors.New("still rolling")
			}
			return err
		}))
	}
	if cf.leaving != "" {
		c.mu.Lock()
		delete(c.gone, cf.leaving)
		c.mu.Unlock()
	}
	if uerr != nil {
		ap.Error = "undo: " + uerr.Error()
	}
	ap.Healed = c.at()
	c.say("fault #%d healed%s", f.ID, suffix(ap.Effect))
}

func suffix(effect string) string {
	if effect == "" {
		return ""
	}
	return ": " + effect
}

// check evaluates I1, I2 and I4 on what every Stargate holds now, and
// I2 also on every ingress's count of handshakes for foreign names; final
// is the check at the end of the settle period.
func (c *campaignRun) check(ctx context.Context, final bool) {
	hs, err := c.e.askStargates(ctx)
	ins := c.e.ingressDocs(ctx)
	now := c.at()
	if err != nil {
		c.w.Log.Info("campaign check could not ask the Stargates", "at", now, "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	active := c.activeIDs()
	// I2: no client completes a handshake for a name the ingress's
	// certificate does not cover (a good Pylon refuses a dns-spoof's
	// answer; one that took it would register as if nothing happened).
	if len(ins) > 0 {
		foreign := c.foreignHandshakes(ins)
		c.sample(campaign.FailClosed, now, len(foreign) == 0, fmt.Sprintf("%d ingress pods; no handshake for a name their certificate does not cover", len(ins)))
		if len(foreign) > 0 {
			c.violate(campaign.FailClosed, "foreign-sni", now, "a client completed a TLS handshake with an ingress for a name its certificate does not cover (it skipped the hostname check)", strings.Join(foreign, "\n"), active)
		}
	}
	// I2: a bad-trust Pylon is never held, by no Stargate, ever.
	var accepted []string
	for _, h := range hs {
		for _, b := range c.bad {
			id := c.ids[b]
			if slices.Contains(h.Registrations, id) || slices.Contains(h.Tunnels, id) || h.Accepted[id] > 0 {
				accepted = append(accepted, h.name()+" holds "+id)
			}
		}
	}
	c.sample(campaign.FailClosed, now, len(accepted) == 0, fmt.Sprintf("%d Stargates; bad-trust Pylons held nowhere", len(hs)))
	if len(accepted) > 0 {
		c.violate(campaign.FailClosed, "held", now, "a Pylon that trusts only an unrelated CA was accepted", strings.Join(accepted, "\n"), active)
	}
	// I1: quiet for the settle period means converged.
	quiet := len(active) == 0 && time.Since(c.healed) >= c.s.Settle.D()
	if quiet || final {
		missing := c.missingOf(hs, c.tunnels, c.gone)
		c.sample(campaign.Convergence, now, len(missing) == 0, fmt.Sprintf("%d Stargates hold %d Pylons", len(hs), len(c.pylons)))
		if len(missing) > 0 {
			// One violation per quiet period: the period began at the last heal.
			c.violate(campaign.Convergence, c.healed.String(), now,
				fmt.Sprintf("%d registrations or tunnels missing %s after the last fault healed", len(missing), time.Since(c.healed).Round(time.Second)),
				strings.Join(missing, "\n"), active)
		}
	}
	// I4: a Pylon gone for longer than the lease bound is held nowhere.
	for p, since := range c.gone {
		if time.Since(since) < c.w.Scale(leaseBound) {
			continue
		}
		stale := holdersOf(hs, c.ids[p])
		c.sample(campaign.NoLeaks, now, len(stale) == 0, p+" gone "+time.Since(since).Round(time.Second).String())
		if len(stale) > 0 {
			c.violate(campaign.NoLeaks, p+since.String(), now,
				fmt.Sprintf("Pylon %s left %s ago, and Stargates still hold it", p, time.Since(since).Round(time.Second)),
				strings.Join(stale, "\n"), active)
		}
	}
}

// foreignHandshakes lists, per ingress pod, the handshakes completed for
// a name its certificate does not cover since the schedule began.
// Callers hold c.mu.
func (c *campaignRun) foreignHandshakes(ins []ingressDoc) []string {
	var out []string
	for _, in := range ins {
		before := c.ingressBefore[string(in.pod.UID)]
		now := in.doc.Counts("foreign_sni")
		for _, name := range slices.Sorted(maps.Keys(now)) {
			if n := now[name] - before[name]; n > 0 {
				out = append(out, fmt.Sprintf("%s/%s completed %d handshake(s) for %s", in.region, in.pod.Name, n, name))
			}
		}
	}
	return out
}

// holdersOf lists the Stargates that hold id's registration or tunnel.
func holdersOf(hs []held, id string) []string {
	var out []string
	for _, h := range hs {
		if slices.Contains(h.Registrations, id) || slices.Contains(h.Tunnels, id) {
			out = append(out, h.name()+" holds "+id)
		}
	}
	return out
}

// heldIDs is every id any Stargate holds, sorted.
func heldIDs(hs []held) []string {
	var out []string
	for _, h := range hs {
		for _, id := range h.Registrations {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

func registers(hs []held) int64 {
	var n int64
	for _, h := range hs {
		n += h.Registers
	}
	return n
}

// activeIDs are the faults on now, sorted (explained adds the recently
// healed ones where a failure needs explaining). Callers hold c.mu.
func (c *campaignRun) activeIDs() []int {
	var out []int
	for id := range c.active {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// explained reports whether a fault was on, or healed within the settle
// period, at some time in [from, to]: the faults that may explain an
// invocation's failure. Callers hold c.mu.
func (c *campaignRun) explained(from, to campaign.Span) []int {
	var out []int
	for id := range c.active {
		out = append(out, id)
	}
	for _, ap := range c.res.Applied {
		// Applied holds finished faults only: one with no heal never went on.
		if ap.Healed > 0 && ap.Injected <= to && ap.Healed+c.s.Settle >= from && !slices.Contains(out, ap.ID) {
			out = append(out, ap.ID)
		}
	}
	slices.Sort(out)
	return out
}

// sample records one evaluation; callers hold c.mu.
func (c *campaignRun) sample(inv campaign.Invariant, at campaign.Span, ok bool, note string) {
	c.res.Checks[inv]++
	c.res.Samples = append(c.res.Samples, campaign.Sample{At: at, Invariant: inv, OK: ok, Note: note})
}

// violate records a violation once per invariant and key; callers hold c.mu.
func (c *campaignRun) violate(inv campaign.Invariant, key string, at campaign.Span, what, evidence string, active []int) {
	k := string(inv) + "\x00" + key
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	c.res.Violations = append(c.res.Violations, campaign.Violation{Invariant: inv, At: at, What: what, Evidence: evidence, Active: active})
	fmt.Printf("campaign: t+%s VIOLATION %s: %s\n", at, inv, what)
}

// invoke sends a trickle of invocations through the regions in turn (I3).
func (c *campaignRun) invoke(ctx context.Context) {
	regions := c.e.Regions()
	t := time.NewTicker(invokeEvery)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		region := regions[i%len(regions)]
		from := c.at()
		ictx, cancel := context.WithTimeout(ctx, invokeDeadline)
		worker, err := c.e.chatEchoedBy(ictx, c.e.Invoke(region), echoModel, "campaign")
		hung := ictx.Err() != nil && ctx.Err() == nil
		cancel()
		if ctx.Err() != nil {
			return // the campaign's end cut it: no verdict
		}
		to := c.at()
		c.mu.Lock()
		if err == nil {
			wrong := c.wrongWorker(worker, from)
			c.sample(campaign.Invocations, to, wrong == "", fmt.Sprintf("invoke via %s: answered by %s", region, worker))
			if wrong != "" {
				c.violate(campaign.Invocations, "worker "+worker, to, fmt.Sprintf("an invocation through %s was answered by the wrong worker: %s", region, wrong), "the answer's system_fingerprint: "+strconv.Quote(worker), c.activeIDs())
			}
			c.mu.Unlock()
			continue
		}
		why := c.explained(from, to)
		r := reason.Of(err)
		ok := !hung && len(why) > 0 && r != reason.Unknown && r != reason.None
		c.sample(campaign.Invocations, to, ok, fmt.Sprintf("invoke via %s: %s", region, r))
		switch {
		case hung:
			c.violate(campaign.Invocations, "hung"+from.String(), to, fmt.Sprintf("an invocation through %s had no answer within its %s deadline", region, invokeDeadline), err.Error(), why)
		case len(why) == 0:
			c.violate(campaign.Invocations, "unexplained"+from.String(), to, fmt.Sprintf("an invocation through %s failed (%s) with no fault to explain it", region, r), err.Error(), why)
		case !ok:
			c.violate(campaign.Invocations, "untyped"+from.String(), to, fmt.Sprintf("an invocation through %s failed without a typed reason", region), err.Error(), why)
		}
		c.mu.Unlock()
	}
}

// wrongWorker says why worker may not have answered an invocation sent at
// from, or "" when it may: the cell's own Pylons (also any held before the
// campaign) and the good campaign Pylons may, unless it is a Pylon that left more than leaseBound before (its
// tunnels must be gone by then, I4). A bad-trust Pylon never registered,
// so it must never be reached; nor may an unknown worker, or an answer
// that names none. Call with mu held.
func (c *campaignRun) wrongWorker(worker string, from campaign.Span) string {
	for _, name := range c.bad {
		if c.ids[name] == worker {
			return fmt.Sprintf("the bad-trust Pylon %s, which must never register", worker)
		}
	}
	for _, name := range c.pylons {
		if c.ids[name] != worker {
			continue
		}
		if left, ok := c.gone[name]; ok {
			if away := c.start.Add(from.D()).Sub(left); away > c.w.Scale(leaseBound) {
				return fmt.Sprintf("Pylon %s, removed %s before the invocation", worker, away.Round(time.Second))
			}
		}
		return ""
	}
	switch {
	case worker == "":
		return "the answer names no worker (no system_fingerprint)"
	case slices.Contains(c.base, worker), slices.Contains(c.baseline, worker):
		return ""
	}
	return fmt.Sprintf("%s, neither the base Pylon nor a campaign Pylon", worker)
}

// leave removes every campaign Pylon and checks that every Stargate lets
// them go within the lease bound and returns to its baseline (I4).
func (c *campaignRun) leave(ctx context.Context) error {
	all := append(slices.Clone(c.pylons), c.bad...)
	if len(all) == 0 {
		return nil
	}
	c.say("removing the %d campaign Pylons", len(all))
	if err := eachPylon(all, func(_ int, name string) error { return c.e.deployer.DeletePylonVariant(ctx, name) }); err != nil {
		return fmt.Errorf("remove the campaign's Pylons: %w", err)
	}
	if c.start.IsZero() || c.e == nil {
		return nil
	}
	gone := time.Now()
	var last []string
	err := c.e.Eventually(ctx, "every Stargate to let the campaign's Pylons go", c.w.Scale(leaseBound), func(ctx context.Context) error {
		hs, err := c.e.askStargates(ctx)
		if err != nil {
			return err
		}
		last = nil
		for _, name := range all {
			last = append(last, holdersOf(hs, c.ids[name])...)
		}
		if extra := without(heldIDs(hs), c.baseline); len(extra) > 0 {
			last = append(last, "held beyond the baseline: "+strings.Join(extra, ", "))
		}
		if len(last) > 0 {
			return errors.New(summarize(last, 4))
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.at()
	c.sample(campaign.NoLeaks, now, err == nil, fmt.Sprintf("%d campaign Pylons removed %s ago", len(all), time.Since(gone).Round(time.Second)))
	if err != nil && ctx.Err() == nil && len(last) > 0 {
		c.violate(campaign.NoLeaks, "end", now, fmt.Sprintf("%s after the campaign's Pylons were deleted, Stargates still hold them", c.w.Scale(leaseBound)), strings.Join(last, "\n"), nil)
		return nil
	}
	return err
}

func without(ids, base []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(base, id) {
			out = append(out, id)
		}
	}
	return out
}

func summarize(lines []string, n int) string {
	if len(lines) <= n {
		return strings.Join(lines, "; ")
	}
	return strings.Join(lines[:n], "; ") + fmt.Sprintf("; and %d more", len(lines)-n)
}

// refusals counts the typed refusals the good campaign Pylons report now.
func (c *campaignRun) refusals(ctx context.Context) int {
	n := 0
	for _, p := range c.pylons {
		doc, err := c.e.PylonStatus(ctx, manifests.PylonName+"-"+p)
		if err != nil {
			continue
		}
		n += len(doc.Reasons())
	}
	return n
}

// measureRollout restarts every region's Stargates at once and times how
// long until every campaign Pylon is held by every new Stargate.
func (c *campaignRun) measureRollout(ctx context.Context) {
	start := time.Now()
	for _, r := range c.e.Regions() {
		if err := c.e.restartStargates(ctx, r); err != nil {
			c.res.Scale.Notes = append(c.res.Scale.Notes, "rollout: "+err.Error())
			return
		}
	}
	err := c.e.Eventually(ctx, "every Pylon held by every new Stargate", c.w.Scale(5*time.Minute), func(ctx context.Context) error {
		for _, r := range c.e.Regions() {
			if ok, err := c.e.stargatesRolledOut(ctx, r); err != nil || !ok {
				return fmt.Errorf("%s still rolling out (%v)", r, err)
			}
		}
		hs, err := c.e.askStargates(ctx)
		if err != nil {
			return err
		}
		if m := c.missing(hs, false); len(m) > 0 {
			return errors.New(summarize(m, 4))
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.res.Scale.Notes = append(c.res.Scale.Notes, "no re-convergence after the rollout: "+err.Error())
		return
	}
	c.res.Scale.Reconverge = campaign.Span(time.Since(start).Round(100 * time.Millisecond))
	c.say("every Pylon held again %s after a rollout of every region", c.res.Scale.Reconverge)
}

// WriteCampaignResult writes a campaign's result where its config says.
func WriteCampaignResult(path string, r campaign.Result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}
