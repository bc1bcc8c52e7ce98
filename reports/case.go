package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// Outcome is how a case ended.
type Outcome string

// The outcomes.
const (
	// Pass: the expectation was met.
	Pass Outcome = "pass"
	// Fail: the expectation was not met.
	Fail Outcome = "fail"
	// Error: the case could not be judged (its positive control failed, or
	// the environment broke under it).
	Error Outcome = "error"
	// Skip: the case did not run.
	Skip Outcome = "skip"
	// Flaky: the case failed, then passed when it was run again
	// (`harness run --reruns N`). It is never counted as a pass; the gate
	// policy decides whether it blocks a release.
	Flaky Outcome = "flaky"
)

// Bad reports whether o is a failure or an error.
func (o Outcome) Bad() bool { return o == Fail || o == Error }

// CaseResult is one case of a run.
type CaseResult struct {
	// Name is the test name, "tls/wrong-root[workload=deployment,trust=bundle]".
	Name string `json:"name"`
	// ID, Layer and Cell locate the case in the matrix.
	ID    string `json:"id"`
	Layer string `json:"layer"`
	Cell  string `json:"cell"`
	// Description is the scenario's one-line summary: what the case shows.
	Description string `json:"description,omitempty"`
	// Kind is "case", or "control-config" for the test that runs a
	// fail-closed scenario with its control's configuration.
	Kind string `json:"kind"`
	// Expect is "pass" or "fail-closed(reason)"; Control names the positive control.
	Expect  string  `json:"expect"`
	Control string  `json:"control,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Observed is the reason observed ("" when it worked).
	Observed string `json:"observed,omitempty"`
	// Message says what was expected and what happened.
	Message string `json:"message,omitempty"`
	// Evidence is the case's evidence folder.
	Evidence string `json:"evidence"`
	// Faults were active while the case ran.
	Faults []string `json:"faults,omitempty"`
	// Proof lists the case's server-side checks, each as "LEVEL: check"
	// with the level it was proven at (status, metrics, discovery, or
	// none: nothing the Stargate exposes could prove it).
	Proof    []string      `json:"proof,omitempty"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration"`
	// Steps are what the case did, in order: deploying its cell, its
	// positive control, the assessment.
	Steps []Step `json:"steps,omitempty"`
	// Covers names the epic requirements the scenario covers (see Requirement).
	Covers []string `json:"covers,omitempty"`
	// Attempt is the run of the case this result comes from: 1, or more
	// after `--reruns`; Earlier holds the attempts before it.
	Attempt int       `json:"attempt,omitempty"`
	Earlier []Attempt `json:"earlier,omitempty"`
	// Repro is the command that reruns this case alone (set for cases
	// that did not pass).
	Repro string `json:"repro,omitempty"`
}

// Step is one step of a case.
type Step struct {
	Name     string        `json:"name"`
	Outcome  Outcome       `json:"outcome"`
	Duration time.Duration `json:"duration"`
	Message  string        `json:"message,omitempty"`
}

// Attempt is an earlier run of a case that was run again.
type Attempt struct {
	Attempt  int           `json:"attempt"`
	Outcome  Outcome       `json:"outcome"`
	Observed string        `json:"observed,omitempty"`
	Message  string        `json:"message,omitempty"`
	Evidence string        `json:"evidence"`
	Duration time.Duration `json:"duration"`
}

// NotRunYet reports whether r is a planned case that never reported.
func (r CaseResult) NotRunYet() bool { return r.Outcome == Error && r.Observed == NotRun }

// Tries is the attempt r comes from (1 when it ran once).
func (r CaseResult) Tries() int { return max(r.Attempt, 1) }

// ResultFile is a case's result inside its evidence folder.
const ResultFile = "result.json"

// CasesDir is the folder, under the artifacts folder, of every case's evidence.
const CasesDir = "cases"

// EvidenceDir returns the evidence folder of the case called name under
// artifacts: the name with every character outside [A-Za-z0-9._=,-]
// replaced by '_' (so "tls/wrong-root[workload=x]" becomes
// "tls_wrong-root_workload=x_").
func EvidenceDir(artifacts, name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._=,-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return filepath.Join(artifacts, CasesDir, b.String())
}

// WriteCase writes r into r.Evidence/result.json, creating the folder.
func WriteCase(r CaseResult) error {
	if r.Evidence == "" {
		return errors.New("case result has no evidence folder")
	}
	if err := os.MkdirAll(r.Evidence, 0o755); err != nil {
		return fmt.Errorf("evidence folder of %s: %w", r.Name, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(r.Evidence, ResultFile), append(data, '\n'), 0o644)
}

// LoadCases reads every case result under artifacts/cases, sorted by name.
func LoadCases(artifacts string) ([]CaseResult, error) {
	var out []CaseResult
	root := filepath.Join(artifacts, CasesDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || d.Name() != ResultFile {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var r CaseResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("case result %s: %w", p, err)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read case results under %s: %w", root, err)
	}
	slices.SortFunc(out, func(a, b CaseResult) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// NotRun is the Observed reason of a planned case that never reported.
const NotRun = "not-run"

// Interrupted is the Observed reason of a case the run cut short (Ctrl-C,
// or a sibling environment's failure stopping the run): whatever it saw
// after the cut is no conformance verdict.
const Interrupted = "interrupted"

// CutShort returns results with every failure or error that ended at or
// after at (the moment the run was cut, for why) turned into an Error
// with reason Interrupted, its own verdict kept in the message. Passes,
// skips, not-run cases and cases that ended before the cut keep theirs.
func CutShort(results []CaseResult, at time.Time, why string) ([]CaseResult, int) {
	out, cut := slices.Clone(results), 0
	for i, r := range out {
		if !r.Outcome.Bad() || r.NotRunYet() || r.Observed == Interrupted || r.Start.Add(r.Duration).Before(at) {
			continue
		}
		was := string(r.Outcome)
		if r.Observed != "" {
			was += " (" + r.Observed + ")"
		}
		out[i].Outcome, out[i].Observed = Error, Interrupted
		out[i].Message = fmt.Sprintf("cut short by %s at %s; no verdict (it ended as %s: %s)", why, at.UTC().Format(time.RFC3339), was, r.Message)
		cut++
	}
	return out, cut
}

// WithNotRun returns results plus, for every planned case that has no
// result, an Error result saying it never ran, so that an interrupted or
// crashed run totals the plan, not just what finished. planned carries the
// cases' identity (Name, ID, Layer, Cell, Kind, Expect); the count of
// added results is returned too.
func WithNotRun(results, planned []CaseResult) ([]CaseResult, int) {
	have := make(map[string]bool, len(results))
	for _, r := range results {
		have[r.Name] = true
	}
	out, missing := slices.Clone(results), 0
	for _, p := range planned {
		if have[p.Name] {
			continue
		}
		p.Outcome, p.Observed = Error, NotRun
		p.Message = "not run: the run ended before this case (interrupted, timed out, or the suite crashed; see suite.log)"
		out = append(out, p)
		missing++
	}
	return out, missing
}
