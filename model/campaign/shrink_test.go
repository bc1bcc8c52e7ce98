package campaign

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// numbered is a valid schedule of n faults with ids 1..n.
func numbered(n int) Schedule {
	s := Schedule{Version: Version, Seed: 3, Duration: Span(10 * time.Minute), Settle: Span(time.Minute)}
	for i := 1; i <= n; i++ {
		s.Faults = append(s.Faults, Fault{ID: i, Kind: PylonKill, Target: "workers", Start: Span(time.Duration(10*i) * time.Second), Duration: Span(time.Second)})
	}
	return s
}

// holding is a synthetic fails: the schedule fails iff pred says so of its
// ids. It counts the runs of each set.
type holding struct {
	pred func(ids []int) bool
	runs map[string]int
}

func newHolding(pred func([]int) bool) *holding {
	return &holding{pred: pred, runs: map[string]int{}}
}

func (h *holding) fails(_ context.Context, s Schedule) (bool, error) {
	h.runs[setKey(ids(s))]++
	return h.pred(ids(s)), nil
}

func containsAll(want ...int) func([]int) bool {
	return func(got []int) bool {
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
}

func atLeastTwoOf(of ...int) func([]int) bool {
	return func(got []int) bool {
		n := 0
		for _, w := range of {
			if slices.Contains(got, w) {
				n++
			}
		}
		return n >= 2
	}
}

// requireOneMinimal checks that the result fails and that removing any
// single fault of it passes.
func requireOneMinimal(t *testing.T, pred func([]int) bool, got Schedule) {
	t.Helper()
	c := ids(got)
	require.True(t, pred(c), "the result %v must fail", c)
	for i := range c {
		less := slices.Delete(slices.Clone(c), i, i+1)
		require.False(t, pred(less), "%v without %d still fails: not 1-minimal", c, c[i])
	}
}

// requireRunOnce checks that no set ran twice, the full schedule never
// ran, and each trial recorded what fails answered.
func requireRunOnce(t *testing.T, h *holding, s Schedule, trials []Trial) {
	t.Helper()
	for key, n := range h.runs {
		require.Equal(t, 1, n, "set {%s} ran %d times", key, n)
	}
	require.Zero(t, h.runs[setKey(ids(s))], "the input schedule ran again")
	require.Len(t, trials, len(h.runs))
	for _, tr := range trials {
		require.Equal(t, h.pred(tr.Faults), tr.Violated, "trial %v", tr.Faults)
		require.True(t, slices.IsSorted(tr.Faults), "trial %v not in schedule order", tr.Faults)
	}
}

func TestShrinkFindsAPair(t *testing.T) {
	s := numbered(10)
	require.NoError(t, s.Validate(nil, []string{"workers"}))
	pred := containsAll(3, 7)
	h := newHolding(pred)
	got, trials, err := Shrink(context.Background(), s, h.fails, 100)
	require.NoError(t, err)
	require.Equal(t, []int{3, 7}, ids(got))
	require.Equal(t, s.Duration, got.Duration)
	require.Equal(t, s.Seed, got.Seed)
	requireOneMinimal(t, pred, got)
	requireRunOnce(t, h, s, trials)
}

func TestShrinkAnyTwoOfThree(t *testing.T) {
	s := numbered(12)
	pred := atLeastTwoOf(2, 5, 9)
	h := newHolding(pred)
	got, trials, err := Shrink(context.Background(), s, h.fails, 100)
	require.NoError(t, err)
	require.Len(t, got.Faults, 2)
	requireOneMinimal(t, pred, got)
	requireRunOnce(t, h, s, trials)
}

func TestShrinkManySeeds(t *testing.T) {
	// Shapes ddmin meets: one culprit, a pair far apart, three, and a
	// culprit at either end.
	for _, want := range [][]int{{1}, {16}, {4}, {1, 16}, {2, 3, 11}, {5, 6, 7, 8}} {
		s := numbered(16)
		pred := containsAll(want...)
		h := newHolding(pred)
		got, trials, err := Shrink(context.Background(), s, h.fails, 200)
		require.NoError(t, err)
		require.Equal(t, want, ids(got))
		requireRunOnce(t, h, s, trials)
	}
}

func TestShrinkTriesTheEmptySchedule(t *testing.T) {
	// A violation with no fault on is a plain bug: the result says so.
	h := newHolding(func([]int) bool { return true })
	got, trials, err := Shrink(context.Background(), numbered(1), h.fails, 0)
	require.NoError(t, err)
	require.Empty(t, got.Faults)
	require.Equal(t, []Trial{{Faults: []int{}, Violated: true}}, trials)

	h = newHolding(containsAll(1))
	got, trials, err = Shrink(context.Background(), numbered(1), h.fails, 0)
	require.NoError(t, err)
	require.Equal(t, []int{1}, ids(got))
	require.Len(t, trials, 1)

	// Nothing to shrink, nothing to run.
	got, trials, err = Shrink(context.Background(), numbered(0), h.fails, 0)
	require.NoError(t, err)
	require.Empty(t, got.Faults)
	require.Empty(t, trials)
}

func TestShrinkStopsAtMaxTrials(t *testing.T) {
	s := numbered(10)
	pred := containsAll(3, 7)
	h := newHolding(pred)
	// Halves, quarters, then the first complement {3..10} fails: the
	// seventh trial.
	got, trials, err := Shrink(context.Background(), s, h.fails, 7)
	require.ErrorIs(t, err, ErrTrials)
	require.Len(t, trials, 7)
	require.Equal(t, []int{3, 4, 5, 6, 7, 8, 9, 10}, ids(got), "the best schedule so far")
	requireRunOnce(t, h, s, trials)

	// 0 is the default bound: a schedule that needs every fault cannot
	// be shown 1-minimal within it.
	s = numbered(20)
	h = newHolding(containsAll(ids(s)...))
	got, trials, err = Shrink(context.Background(), s, h.fails, 0)
	require.ErrorIs(t, err, ErrTrials)
	require.Len(t, trials, DefaultTrials)
	require.Equal(t, ids(s), ids(got))
}

func TestShrinkStopsWithTheContext(t *testing.T) {
	s := numbered(10)
	pred := containsAll(3, 7)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	fails := func(ctx context.Context, s Schedule) (bool, error) {
		calls++
		if calls == 4 {
			// The campaign is cut midway: the engine says so.
			cancel()
			return false, ctx.Err()
		}
		return pred(ids(s)), nil
	}
	got, trials, err := Shrink(ctx, s, fails, 100)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 4, calls, "no trial after the context ended")
	require.Len(t, trials, 4)
	require.Equal(t, context.Canceled.Error(), trials[3].Err)
	require.False(t, trials[3].Violated)
	require.True(t, pred(ids(got)), "the best schedule so far still fails")

	// A violation seen before the cut still counts.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	fails = func(_ context.Context, s Schedule) (bool, error) {
		cancel()
		return containsAll(3)(ids(s)), nil
	}
	got, trials, err = Shrink(ctx, s, fails, 100)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []Trial{{Faults: []int{1, 2, 3, 4, 5}, Violated: true}}, trials)
	require.Equal(t, []int{1, 2, 3, 4, 5}, ids(got))

	// A context ended before the start runs nothing.
	_, trials, err = Shrink(ctx, s, fails, 100)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, trials)
}

func TestShrinkCountsAnErrorAsAPass(t *testing.T) {
	s := numbered(10)
	pred := containsAll(3, 7)
	boom := errors.New("could not deploy")
	runs := map[string]int{}
	fails := func(_ context.Context, s Schedule) (bool, error) {
		runs[setKey(ids(s))]++
		if len(s.Faults) == 5 {
			// Even when the set would fail: an error proves nothing.
			return true, boom
		}
		return pred(ids(s)), nil
	}
	got, trials, err := Shrink(context.Background(), s, fails, 100)
	require.NoError(t, err)
	require.Equal(t, []int{3, 7}, ids(got))
	errored := 0
	for _, tr := range trials {
		if len(tr.Faults) == 5 {
			errored++
			require.Equal(t, "could not deploy", tr.Err)
			require.False(t, tr.Violated)
		} else {
			require.Empty(t, tr.Err)
		}
	}
	require.Positive(t, errored)
	for key, n := range runs {
		require.Equal(t, 1, n, "set {%s} ran %d times: an error is cached too", key, n)
	}
}

func TestSplit(t *testing.T) {
	require.Equal(t, [][]int{{1, 2}, {3, 4, 5}}, split([]int{1, 2, 3, 4, 5}, 2))
	require.Equal(t, [][]int{{1}, {2}, {3}}, split([]int{1, 2, 3}, 3))
	require.Equal(t, [][]int{{1, 2}, {3, 4}, {5, 6, 7}}, split([]int{1, 2, 3, 4, 5, 6, 7}, 3))
}
