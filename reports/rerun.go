package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// AttemptsDir is the folder, under the artifacts folder, that keeps the
// evidence of earlier attempts of cases run again: attempts/<n>/<case>/.
const AttemptsDir = "attempts"

// ShelveAttempt moves the evidence folder of r (attempt r.Tries()) to
// attempts/<n>/ under artifacts, so that running the case again starts from
// an empty folder, and returns r pointing at the moved folder.
func ShelveAttempt(artifacts string, r CaseResult) (CaseResult, error) {
	to := filepath.Join(artifacts, AttemptsDir, strconv.Itoa(r.Tries()), filepath.Base(r.Evidence))
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return r, fmt.Errorf("keep attempt %d of %s: %w", r.Tries(), r.Name, err)
	}
	if err := os.Rename(r.Evidence, to); err != nil && !os.IsNotExist(err) {
		return r, fmt.Errorf("keep attempt %d of %s: %w", r.Tries(), r.Name, err)
	}
	r.Evidence = to
	return r, nil
}

// MergeAttempt folds the results of attempt n (the cases run again) into
// results: each rerun case replaces its earlier result, which it keeps in
// Earlier. A case that passes only on a rerun becomes Flaky, never Pass.
// A planned case that the rerun did not report keeps its earlier result.
func MergeAttempt(results, again []CaseResult, n int) []CaseResult {
	byName := make(map[string]CaseResult, len(again))
	for _, r := range again {
		byName[r.Name] = r
	}
	out := make([]CaseResult, len(results))
	for i, p := range results {
		r, ok := byName[p.Name]
		if !ok || r.NotRunYet() {
			out[i] = p
			continue
		}
		r.Attempt = n
		r.Earlier = append(append([]Attempt(nil), p.Earlier...), Attempt{
			Attempt: p.Tries(), Outcome: p.Outcome, Observed: p.Observed, Message: p.Message,
			Evidence: p.Evidence, Duration: p.Duration,
		})
		if r.Outcome == Pass {
			r.Outcome = Flaky
		}
		out[i] = r
	}
	return out
}
