package campaignreport

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/reports"
)

// SuiteName names the campaign's testsuite, and each testcase's class.
const SuiteName = "campaign"

// junit renders the campaign as one testsuite with one testcase per
// invariant: a <failure> when it was violated (every violation in the
// body), an <error> when there is no verdict (the engine failed, or the
// invariant was never checked), else a pass. The invariants are checked
// side by side all through the campaign, so each case's time is the
// campaign's checked time, and the suite's is that too, not their sum.
func junit(r campaign.Result, o Options) ([]byte, error) {
	took := seconds(r.Ended.D())
	suite := reports.JUnitSuite{Name: SuiteName, Time: took, Properties: suiteProperties(r, o)}
	if !r.Started.IsZero() {
		suite.Timestamp = r.Started.UTC().Format(time.RFC3339)
	}
	for _, inv := range campaign.Invariants {
		jc := reports.JUnitCase{Name: string(inv), Classname: SuiteName, Time: took,
			Properties: []reports.JUnitProperty{{Name: "checks", Value: strconv.Itoa(r.Checks[inv])}}}
		s := statusOf(r, inv)
		switch s.Class {
		case "fail":
			jc.Failure = &reports.JUnitProblem{Message: firstLine(s.First.What), Type: "violated", Text: violationsText(r, inv)}
			suite.Failures++
		case "error":
			jc.Error = &reports.JUnitProblem{Message: s.Detail, Type: "no-verdict", Text: r.Error}
			suite.Errors++
		}
		if s.Class != "pass" {
			jc.SystemOut = replayText(o, inv)
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	doc := reports.JUnitSuites{Name: SuiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: took, Suites: []reports.JUnitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func suiteProperties(r campaign.Result, o Options) []reports.JUnitProperty {
	s := r.Schedule
	var ps []reports.JUnitProperty
	add := func(name, value string) {
		if value != "" {
			ps = append(ps, reports.JUnitProperty{Name: name, Value: value})
		}
	}
	add("seed", strconv.FormatInt(s.Seed, 10))
	add("topology", s.Topology)
	add("duration", s.Duration.String())
	add("settle", s.Settle.String())
	add("ended", r.Ended.String())
	add("faults", strconv.Itoa(len(s.Faults)))
	add("pylons", strconv.Itoa(len(r.Pylons)))
	add("bad-pylons", strconv.Itoa(len(r.BadPylons)))
	add("verdict", verdict(r))
	add("engine-error", firstLine(r.Error))
	add("replay", o.Replay)
	if sh := o.Shrunk; sh != nil {
		add("shrunk.invariant", string(sh.Invariant))
		add("shrunk.faults", ids(faultIDs(sh.Schedule)))
		add("shrunk.replay", sh.Replay)
	}
	return ps
}

// violationsText is a failure's body: each violation of inv with the
// faults active then and its evidence.
func violationsText(r campaign.Result, inv campaign.Invariant) string {
	var b strings.Builder
	for _, v := range r.Violations {
		if v.Invariant != inv {
			continue
		}
		fmt.Fprintf(&b, "at %s: %s\n", v.At, v.What)
		fmt.Fprintf(&b, "  active faults: %s\n", orNone(strings.Join(activeFaults(r.Schedule, v.Active), ", ")))
		if v.Evidence != "" {
			b.WriteString("  evidence:\n")
			for _, l := range strings.Split(strings.TrimRight(v.Evidence, "\n"), "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "the engine failed after: %s\n", r.Error)
	}
	return b.String()
}

// replayText is a failed case's way back: the campaign's replay command,
// and the minimal schedule's on the invariant it was shrunk for.
func replayText(o Options, inv campaign.Invariant) string {
	var b strings.Builder
	if o.Replay != "" {
		b.WriteString("replay: " + o.Replay + "\n")
	}
	if o.Shrunk != nil && o.Shrunk.Invariant == inv && o.Shrunk.Replay != "" {
		b.WriteString("replay the minimal schedule: " + o.Shrunk.Replay + "\n")
	}
	return b.String()
}

func faultIDs(s campaign.Schedule) []int {
	out := make([]int, len(s.Faults))
	for i, f := range s.Faults {
		out[i] = f.ID
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
