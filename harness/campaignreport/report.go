// Package campaignreport renders what a fault campaign found
// (campaign.Result) as the reports of its artifacts folder: the result and
// its replayable schedule as JSON, JUnit with one testcase per invariant,
// a self-contained HTML page with the campaign's timeline, a markdown
// summary, and the console lines printed when the campaign ends (Text).
// The engine and the CLI fill the Result; this package only reads it.
package campaignreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/reports"
)

// The files Write writes into its folder.
const (
	// ResultFile is the Result, from which every other file can be
	// rendered again.
	ResultFile = "campaign.json"
	// ScheduleFile is the schedule that ran: replay it with the CLI.
	ScheduleFile = "schedule.json"
	// ShrunkScheduleFile is the minimal violating schedule, written only
	// when there is one.
	ShrunkScheduleFile = "schedule-shrunk.json"
	// JUnitFile has the matrix run's name, so CI picks either up alike.
	JUnitFile   = reports.JUnitFile
	HTMLFile    = "campaign.html"
	SummaryFile = "summary.md"
)

// Options are what the reports say beyond the Result itself.
type Options struct {
	// Replay is the command that runs the campaign's schedule again
	// (empty: the reports name ScheduleFile only).
	Replay string
	// Shrunk is the minimal schedule that still violates an invariant
	// (nil: the campaign was not shrunk).
	Shrunk *Shrunk
}

// Shrunk is the outcome of shrinking a violating schedule: the smallest
// schedule found that still violates Invariant, and every trial run to
// find it.
type Shrunk struct {
	Invariant campaign.Invariant `json:"invariant"`
	Schedule  campaign.Schedule  `json:"schedule"`
	Trials    []campaign.Trial   `json:"trials"`
	// Replay is the command that runs the minimal schedule.
	Replay string `json:"replay,omitempty"`
	// Err is why the search stopped early (its trial budget, Ctrl-C): the
	// schedule still violates, but may not be minimal.
	Err string `json:"err,omitempty"`
}

// Write writes every report of r into dir (created if missing), each file
// atomically so a reader never sees half of one: campaign.json,
// schedule.json, junit.xml, campaign.html, summary.md and, when o.Shrunk is
// set, schedule-shrunk.json. Without o.Shrunk an older
// schedule-shrunk.json is removed, so a folder written again never offers
// a stale minimal schedule.
func Write(dir string, r campaign.Result, o Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type file struct {
		name   string
		render func() ([]byte, error)
	}
	files := []file{
		{ResultFile, func() ([]byte, error) { return indent(r) }},
		{ScheduleFile, func() ([]byte, error) { return indent(r.Schedule) }},
		{JUnitFile, func() ([]byte, error) { return junit(r, o) }},
		{HTMLFile, func() ([]byte, error) { return page(r, o) }},
		{SummaryFile, func() ([]byte, error) { return []byte(markdown(r, o)), nil }},
	}
	if o.Shrunk != nil {
		files = append(files, file{ShrunkScheduleFile, func() ([]byte, error) { return indent(o.Shrunk.Schedule) }})
	} else if err := os.Remove(filepath.Join(dir, ShrunkScheduleFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, f := range files {
		data, err := f.render()
		if err != nil {
			return fmt.Errorf("render %s: %w", f.name, err)
		}
		if err := atomicfile.Write(filepath.Join(dir, f.name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

func indent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// verdict is the campaign's outcome in one word. A violation decides even
// when the engine failed later: it was seen, so the system is at fault. With
// no violation, an engine failure or an unchecked invariant leaves no
// verdict (ERROR), never a pass.
func verdict(r campaign.Result) string {
	switch {
	case len(r.Violations) > 0:
		return "FAIL"
	case !r.OK():
		return "ERROR"
	}
	return "PASS"
}

// status is one invariant's outcome, in the same precedence as verdict.
type status struct {
	Class  string // pass, fail, error: the page's colours
	Word   string // held, VIOLATED, ERROR
	Detail string // the first violation, or why there is no verdict
	First  *campaign.Violation
	Count  int // violations
}

func statusOf(r campaign.Result, inv campaign.Invariant) status {
	s := status{Class: "pass", Word: "held"}
	for _, v := range r.Violations {
		if v.Invariant == inv {
			s.Count++
		}
	}
	switch v, ok := r.First(inv); {
	case ok:
		s.Class, s.Word, s.First = "fail", "VIOLATED", &v
		s.Detail = "at " + v.At.String() + ": " + firstLine(v.What)
	case r.Error != "":
		s.Class, s.Word, s.Detail = "error", "ERROR", "engine failure, no verdict: "+firstLine(r.Error)
	case r.Checks[inv] == 0:
		s.Class, s.Word, s.Detail = "error", "ERROR", "never checked: proves nothing"
	}
	return s
}

// faultByID finds a scheduled fault, for the "active faults" columns.
func faultByID(s campaign.Schedule, id int) (campaign.Fault, bool) {
	for _, f := range s.Faults {
		if f.ID == id {
			return f, true
		}
	}
	return campaign.Fault{}, false
}

// activeFaults spells a violation's active fault ids out as the faults.
func activeFaults(s campaign.Schedule, ids []int) []string {
	var out []string
	for _, id := range ids {
		if f, ok := faultByID(s, id); ok {
			out = append(out, fmt.Sprintf("#%d %s %s", f.ID, f.Kind, f.Target))
		} else {
			out = append(out, fmt.Sprintf("#%d", id))
		}
	}
	return out
}

func ids(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, " ")
}

// appliedOf finds what became of a scheduled fault.
func appliedOf(r campaign.Result, id int) (campaign.Applied, bool) {
	for _, a := range r.Applied {
		if a.ID == id {
			return a, true
		}
	}
	return campaign.Applied{}, false
}

// injectFailed tells a failed inject from a failed undo: the engine
// records neither time for a fault it could not inject.
func injectFailed(a campaign.Applied) bool {
	return a.Error != "" && a.Injected == 0 && a.Healed == 0
}

// appliedLine is what became of a fault, in one line.
func appliedLine(r campaign.Result, id int) string {
	a, ok := appliedOf(r, id)
	switch {
	case !ok:
		return "not applied"
	case injectFailed(a):
		return "inject FAILED: " + firstLine(a.Error)
	}
	s := "injected " + a.Injected.String()
	if a.Healed > 0 {
		s += ", healed " + a.Healed.String()
	} else {
		s += ", never healed"
	}
	if a.Effect != "" {
		s += "; " + firstLine(a.Effect)
	}
	if a.Error != "" {
		s += "; ERROR " + firstLine(a.Error)
	}
	return s
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
