package campaign

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// Options shape the schedule Generate draws.
type Options struct {
	// Duration is the fault window; Settle the convergence bound after it
	// (0: DefaultSettle).
	Duration time.Duration
	Settle   time.Duration
	// Kinds is the menu to draw from (empty: every kind).
	Kinds []Kind
	// Workers are the topology's workers clusters' names, Regions its
	// Stargate clusters' names: the targets are drawn from them.
	Workers []string
	Regions []string
	// Topology is the topology's name, recorded in the schedule.
	Topology string
	// MaxActive bounds the faults on at the same moment (0: 3).
	MaxActive int
	// MinFault and MaxFault bound each fault's duration (0: 5s and 40s);
	// MaxFault is cut to Duration.
	MinFault, MaxFault time.Duration
	// Faults is how many faults to draw (0: one per 40 s of Duration, at
	// least 2). A fault that finds no room under MaxActive is dropped, so
	// a schedule may hold fewer.
	Faults int
}

// Defaults of Options.
const (
	DefaultSettle    = time.Minute
	DefaultMaxActive = 3
	DefaultMinFault  = 5 * time.Second
	DefaultMaxFault  = 40 * time.Second
	// faultEvery sets the default number of faults from the Duration.
	faultEvery = 40 * time.Second
	// tick is the resolution of every drawn time: schedules stay readable
	// and their JSON exact.
	tick = 100 * time.Millisecond
	// placeTries bounds the start redraws of a fault that does not fit.
	placeTries = 16
	// pcgStream is the PCG's second seed word; changing it changes every
	// schedule ever drawn.
	pcgStream = 0x6e7663662d63616d // "nvcf-cam"
)

// pathSep joins a path target's two clusters.
const pathSep = "->"

// Path is the target of a path kind from one cluster to another.
func Path(from, to string) string { return from + pathSep + to }

// SplitPath reads a path target "FROM->TO".
func SplitPath(target string) (from, to string, ok bool) {
	from, to, ok = strings.Cut(target, pathSep)
	return from, to, ok && from != "" && to != ""
}

// onRegion says the kind's target is a region (a Stargate cluster); the
// kinds neither on a path nor on a region target a workers cluster.
func (k Kind) onRegion() bool {
	switch k {
	case StargateKill, Rollout, ScaleDown, CertRotate:
		return true
	}
	return false
}

// draws is the generator's randomness. It takes only the PCG's raw
// output, whose algorithm is fixed, and bounds it itself: math/rand/v2
// does not promise that Rand's derived draws (IntN…) stay the same across
// Go releases, and a seed must replay the same schedule on any toolchain.
type draws struct{ src *rand.PCG }

// intn is uniform in [0, n), without modulo bias (Lemire's method).
func (d draws) intn(n int) int {
	if n <= 0 {
		panic("campaign: intn of a non-positive bound")
	}
	bound := uint64(n)
	threshold := -bound % bound
	for {
		hi, lo := bits.Mul64(d.src.Uint64(), bound)
		if lo >= threshold {
			return int(hi)
		}
	}
}

// between is uniform in [lo, hi], in steps of step.
func (d draws) between(lo, hi, step int) int { return lo + step*d.intn((hi-lo)/step+1) }

func (d draws) pick(from []string) string { return from[d.intn(len(from))] }

// Generate draws a schedule from seed: the same seed and options give the
// same schedule, byte for byte, on any machine.
func Generate(seed int64, o Options) (Schedule, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Schedule{}, err
	}
	d := draws{rand.NewPCG(uint64(seed), pcgStream)}
	window := int(o.Duration / tick)
	minT, maxT := int((o.MinFault+tick-1)/tick), int(o.MaxFault/tick)
	placed := make([]Fault, 0, o.Faults)
	for range o.Faults {
		f := Fault{Kind: o.Kinds[d.intn(len(o.Kinds))]}
		f.Target = drawTarget(d, f.Kind, o.Workers, o.Regions)
		f.Params = drawParams(d, f.Kind)
		dur := d.between(minT, maxT, 1)
		f.Duration = Span(time.Duration(dur) * tick)
		for range placeTries {
			f.Start = Span(time.Duration(d.intn(window-dur+1)) * tick)
			if fits(placed, f, o.MaxActive) {
				placed = append(placed, f)
				break
			}
		}
	}
	// Stable: equal starts keep their draw order, which the seed fixes.
	slices.SortStableFunc(placed, func(a, b Fault) int { return cmp.Compare(a.Start, b.Start) })
	for i := range placed {
		placed[i].ID = i + 1
	}
	return Schedule{
		Version:  Version,
		Seed:     seed,
		Topology: o.Topology,
		Duration: Span(o.Duration),
		Settle:   Span(o.Settle),
		Faults:   placed,
	}, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Duration < tick {
		return o, fmt.Errorf("campaign duration %s: want at least %s", o.Duration, tick)
	}
	if o.Settle < 0 || o.MaxActive < 0 || o.Faults < 0 || o.MinFault < 0 || o.MaxFault < 0 {
		return o, fmt.Errorf("campaign options: settle, max active, fault count and fault durations must not be negative")
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	if o.MaxActive == 0 {
		o.MaxActive = DefaultMaxActive
	}
	if o.Faults == 0 {
		o.Faults = max(2, int(o.Duration/faultEvery))
	}
	if len(o.Kinds) == 0 {
		o.Kinds = Kinds
	}
	explicitMin := o.MinFault != 0
	if o.MinFault == 0 {
		o.MinFault = DefaultMinFault
	}
	if o.MaxFault == 0 {
		o.MaxFault = DefaultMaxFault
	}
	o.MaxFault = min(o.MaxFault, o.Duration)
	if o.MinFault > o.MaxFault {
		if explicitMin {
			return o, fmt.Errorf("shortest fault %s is longer than the longest %s (the longest is cut to the campaign duration); lower it", o.MinFault, o.MaxFault)
		}
		o.MinFault = o.MaxFault
	}
	if (o.MinFault+tick-1)/tick > o.MaxFault/tick {
		return o, fmt.Errorf("fault durations %s..%s hold no multiple of %s; widen them", o.MinFault, o.MaxFault, tick)
	}
	for _, k := range o.Kinds {
		if !k.Valid() {
			return o, fmt.Errorf("unknown fault kind %q (kinds: %s)", k, KindNames())
		}
		if (k.OnPath() || !k.onRegion()) && len(o.Workers) == 0 {
			return o, fmt.Errorf("fault kind %s targets a workers cluster, and none is given; drop the kind or name the workers clusters", k)
		}
		if (k.OnPath() || k.onRegion()) && len(o.Regions) == 0 {
			return o, fmt.Errorf("fault kind %s targets a Stargate cluster, and none is given; drop the kind or name the regions", k)
		}
	}
	return o, nil
}

func drawTarget(d draws, k Kind, workers, regions []string) string {
	switch {
	case k == Partition && len(regions) >= 2 && d.intn(4) == 0:
		// Between regions: the Stargates' peer watches lose each other.
		i := d.intn(len(regions))
		j := d.intn(len(regions) - 1)
		if j >= i {
			j++
		}
		return Path(regions[i], regions[j])
	case k.OnPath():
		return Path(d.pick(workers), d.pick(regions))
	case k.onRegion():
		return d.pick(regions)
	default:
		return d.pick(workers)
	}
}

func drawParams(d draws, k Kind) map[string]string {
	ms := func(lo, hi int) string { return fmt.Sprintf("%dms", d.between(lo, hi, 10)) }
	switch k {
	case QUICLoss:
		loss := d.between(10, 40, 5)
		return map[string]string{"loss": fmt.Sprintf("%d.%02d", loss/100, loss%100), "delay": ms(50, 200)}
	case QUICDelay:
		return map[string]string{"delay": ms(100, 400), "jitter": ms(20, 80)}
	case TCP:
		return map[string]string{"latency": ms(100, 500)}
	}
	return nil
}

// fits says f can join placed: the same injector cannot stack a fault on
// a target it already holds, and at most maxActive faults are on at once.
func fits(placed []Fault, f Fault, maxActive int) bool {
	for _, g := range placed {
		if sameSlot(f, g) {
			return false
		}
	}
	// The count of faults on only grows at a start, so f's own start and
	// every start within f are the moments to check.
	moments := []Span{f.Start}
	for _, g := range placed {
		if f.Start < g.Start && g.Start < f.End() {
			moments = append(moments, g.Start)
		}
	}
	for _, at := range moments {
		on := 1
		for _, g := range placed {
			if g.Start <= at && at < g.End() {
				on++
			}
		}
		if on > maxActive {
			return false
		}
	}
	return true
}

// sameSlot says a and b hold the same kind on the same target at times
// that overlap or touch: touching counts, so the injector always heals one
// before it injects the next.
func sameSlot(a, b Fault) bool {
	return a.Kind == b.Kind && a.Target == b.Target && a.Start <= b.End() && b.Start <= a.End()
}

// Validate checks the schedule against the topology's Stargate clusters
// (regions) and workers clusters; it reports every problem, one a line.
func (s Schedule) Validate(regions, workers []string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Version != Version {
		bad("schedule version %d: this harness reads version %d; set \"version\": %d", s.Version, Version, Version)
	}
	if s.Duration <= 0 {
		bad("schedule duration %s: want a positive duration such as \"10m\"", s.Duration)
	}
	if s.Settle <= 0 {
		bad("schedule settle %s: want a positive duration such as \"1m\"", s.Settle)
	}
	ids := map[int]bool{}
	for i, f := range s.Faults {
		name := fmt.Sprintf("fault #%d", f.ID)
		if f.ID <= 0 {
			bad("%s (the %d. fault): ids must be positive; number the faults 1, 2, …", name, i+1)
		} else if ids[f.ID] {
			bad("%s: id used twice; give each fault its own id", name)
		}
		ids[f.ID] = true
		if !f.Kind.Valid() {
			bad("%s: unknown kind %q (kinds: %s)", name, f.Kind, KindNames())
		} else if err := checkTarget(f.Kind, f.Target, regions, workers); err != nil {
			bad("%s: %w", name, err)
		}
		if f.Start < 0 {
			bad("%s: start %s is before the campaign; start it at 0s or later", name, f.Start)
		}
		if f.Duration <= 0 {
			bad("%s: duration %s; want a positive duration", name, f.Duration)
		}
		if s.Duration > 0 && f.End() > s.Duration {
			bad("%s: ends at %s, after the campaign's %s; shorten it or start it earlier", name, f.End(), s.Duration)
		}
		if i > 0 && f.Start < s.Faults[i-1].Start {
			bad("%s: starts at %s, before #%d listed above it at %s; list the faults in start order", name, f.Start, s.Faults[i-1].ID, s.Faults[i-1].Start)
		}
		for _, g := range s.Faults[:i] {
			if sameSlot(f, g) {
				bad("%s: %s on %s overlaps #%d's (%s..%s); the injector cannot stack them, so move one so they neither overlap nor touch", name, f.Kind, f.Target, g.ID, g.Start, g.End())
			}
		}
	}
	return errors.Join(errs...)
}

func checkTarget(k Kind, target string, regions, workers []string) error {
	is := func(names []string, n string) bool { return slices.Contains(names, n) }
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		return strings.Join(names, ", ")
	}
	switch {
	case k.OnPath():
		from, to, ok := SplitPath(target)
		switch {
		case !ok:
			return fmt.Errorf("%s targets a path; write it \"WORKERS->REGION\", not %q", k, target)
		case k == Partition && is(regions, from) && is(regions, to):
			if from == to {
				return fmt.Errorf("partition %q joins a region to itself; name two different regions", target)
			}
			return nil
		case !is(workers, from):
			return fmt.Errorf("target %q: %q is no workers cluster (workers: %s)", target, from, list(workers))
		case !is(regions, to):
			return fmt.Errorf("target %q: %q is no region (regions: %s)", target, to, list(regions))
		}
	case k.onRegion():
		if !is(regions, target) {
			return fmt.Errorf("%s targets a region; %q is none (regions: %s)", k, target, list(regions))
		}
	default:
		if !is(workers, target) {
			return fmt.Errorf("%s targets a workers cluster; %q is none (workers: %s)", k, target, list(workers))
		}
	}
	return nil
}

// Read loads a schedule file; it checks the format, not the targets
// (Validate, with the topology).
func Read(path string) (Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Schedule{}, fmt.Errorf("read schedule: %w", err)
	}
	// The version first: another version's fields may not decode at all.
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Schedule{}, fmt.Errorf("schedule %s: not a schedule's JSON: %w", path, err)
	}
	if head.Version != Version {
		return Schedule{}, fmt.Errorf("schedule %s: version %d, this harness reads version %d", path, head.Version, Version)
	}
	var s Schedule
	dec := json.NewDecoder(bytes.NewReader(data))
	// A misspelt field of a hand-written schedule would else be a silent default.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Schedule{}, fmt.Errorf("schedule %s: %w", path, err)
	}
	return s, nil
}

// Write saves the schedule as indented JSON, replacing path atomically.
func (s Schedule) Write(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write schedule: %w", err)
	}
	return nil
}

// Text lists the schedule for a reader, before the run.
func (s Schedule) Text() string {
	var b strings.Builder
	plural := "s"
	if len(s.Faults) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "campaign seed %d over %s (settle %s): %d fault%s\n", s.Seed, s.Duration, s.Settle, len(s.Faults), plural)
	for _, f := range s.Faults {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// Keep is the sub-schedule of the faults with those ids, as Shrink runs
// it: ids, order and window stay, so its report reads against the
// original's.
func (s Schedule) Keep(ids []int) Schedule {
	out := s
	out.Faults = make([]Fault, 0, len(ids))
	for _, f := range s.Faults {
		if slices.Contains(ids, f.ID) {
			// A copy of the params: the sub-schedule must not share a map
			// with the schedule it came from.
			f.Params = maps.Clone(f.Params)
			out.Faults = append(out.Faults, f)
		}
	}
	return out
}

// Window is how long a run of the schedule lasts once set up.
func (s Schedule) Window() Span { return s.Duration + s.Settle }

// ActiveAt lists the ids of the faults on at an offset: a fault is on from
// its Start up to, not including, its End.
func (s Schedule) ActiveAt(at Span) []int {
	var ids []int
	for _, f := range s.Faults {
		if f.Start <= at && at < f.End() {
			ids = append(ids, f.ID)
		}
	}
	return ids
}
