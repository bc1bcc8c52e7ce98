package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// DefaultTrials bounds Shrink's runs when the caller gives no bound: each
// run is a whole campaign, minutes long.
const DefaultTrials = 32

// ErrTrials says Shrink spent its trials before it could prove its
// schedule 1-minimal; the schedule it returns still violates.
var ErrTrials = errors.New("trial budget spent before the schedule was shown 1-minimal")

// Trial is one run of a sub-schedule while shrinking.
type Trial struct {
	// Faults are the ids the sub-schedule kept, in schedule order.
	Faults []int `json:"faults"`
	// Violated says the run broke an invariant; a run that failed (Err)
	// counts as not violated.
	Violated bool   `json:"violated"`
	Err      string `json:"error,omitempty"`
}

// Shrink looks for a smallest sub-schedule of s that still fails: delta
// debugging (Zeller's ddmin) over its faults, then a pass removing one
// fault at a time, so the result is 1-minimal (removing any single fault
// makes it pass). s itself is taken to fail and is not run again. Each
// sub-schedule runs at most once; at most maxTrials run (0:
// DefaultTrials). A single fault is tried away too, so a violation that
// needs no fault at all shrinks to an empty schedule.
//
// An error of fails counts as a pass and is kept in its Trial. When the
// trials run out the result is the smallest failing schedule found, with
// ErrTrials; when ctx ends, the same with ctx's error. Trials are in the
// order run.
func Shrink(ctx context.Context, s Schedule, fails func(context.Context, Schedule) (bool, error), maxTrials int) (Schedule, []Trial, error) {
	if maxTrials <= 0 {
		maxTrials = DefaultTrials
	}
	sh := &shrinker{ctx: ctx, s: s, fails: fails, max: maxTrials, known: map[string]bool{}}
	all := make([]int, len(s.Faults))
	for i, f := range s.Faults {
		all[i] = f.ID
	}
	sh.known[setKey(all)] = true
	c, err := sh.ddmin(all)
	return s.Keep(c), sh.trials, err
}

type shrinker struct {
	ctx    context.Context
	s      Schedule
	fails  func(context.Context, Schedule) (bool, error)
	max    int
	known  map[string]bool
	trials []Trial
}

// ddmin shrinks c, which fails, and returns the smallest failing set it
// reached: on an error too, so the caller keeps the progress made.
func (sh *shrinker) ddmin(c []int) ([]int, error) {
	n := 2
	for len(c) >= 2 {
		parts := split(c, n)
		next, err := sh.firstFailing(parts)
		if err != nil {
			return c, err
		}
		if next != nil {
			c, n = next, 2
			continue
		}
		// With two parts each complement is the other part, already run.
		if n > 2 {
			comps := make([][]int, len(parts))
			for i := range parts {
				comps[i] = complement(c, parts[i])
			}
			if next, err = sh.firstFailing(comps); err != nil {
				return c, err
			}
			if next != nil {
				c, n = next, max(n-1, 2)
				continue
			}
		}
		if n >= len(c) {
			break
		}
		n = min(len(c), 2*n)
	}
	// ddmin ends having run every one-removal already (all answered from
	// the cache) except from a single fault to none: this pass runs that,
	// and anything ddmin's ending did not cover.
	for removed := true; removed; {
		removed = false
		for i := range c {
			cand := slices.Delete(slices.Clone(c), i, i+1)
			ok, err := sh.test(cand)
			if err != nil {
				return c, err
			}
			if ok {
				c, removed = cand, true
				break
			}
		}
	}
	return c, nil
}

// firstFailing runs the sets in order and returns the first that fails
// (nil when none does).
func (sh *shrinker) firstFailing(sets [][]int) ([]int, error) {
	for _, set := range sets {
		ok, err := sh.test(set)
		if err != nil {
			return nil, err
		}
		if ok {
			return set, nil
		}
	}
	return nil, nil
}

// test says whether the sub-schedule of ids fails, from the cache or by
// one trial; its error stops the shrink (the budget, the context).
func (sh *shrinker) test(ids []int) (bool, error) {
	key := setKey(ids)
	if v, ok := sh.known[key]; ok {
		return v, nil
	}
	if err := sh.ctx.Err(); err != nil {
		return false, err
	}
	if len(sh.trials) >= sh.max {
		return false, ErrTrials
	}
	violated, err := sh.fails(sh.ctx, sh.s.Keep(ids))
	t := Trial{Faults: slices.Clone(ids), Violated: violated && err == nil}
	if err != nil {
		t.Err = err.Error()
	}
	if cerr := sh.ctx.Err(); cerr != nil && !t.Violated {
		// A run cut by the context proves no pass: not cached, and the
		// shrink stops. A violation seen before the cut still counts.
		if t.Err == "" {
			t.Err = cerr.Error()
		}
		sh.trials = append(sh.trials, t)
		return false, cerr
	}
	sh.trials = append(sh.trials, t)
	sh.known[key] = t.Violated
	return t.Violated, nil
}

// split cuts c into n parts of near-equal length, in order.
func split(c []int, n int) [][]int {
	parts := make([][]int, 0, n)
	start := 0
	for i := range n {
		end := start + (len(c)-start)/(n-i)
		parts = append(parts, c[start:end:end])
		start = end
	}
	return parts
}

func complement(c, part []int) []int {
	out := make([]int, 0, len(c)-len(part))
	for _, id := range c {
		if !slices.Contains(part, id) {
			out = append(out, id)
		}
	}
	return out
}

// setKey names a set of ids whatever their order.
func setKey(ids []int) string {
	sorted := slices.Sorted(slices.Values(ids))
	var b strings.Builder
	for i, id := range sorted {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, id)
	}
	return b.String()
}
