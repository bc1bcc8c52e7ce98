package campaignreport

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/model/campaign"
)

// SuiteName names the campaign's testsuite, and each testcase's class.
const SuiteName = "campaign"

// The JUnit shapes of the matrix run's report (package reports), trimmed to
// what a campaign fills.
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitProblem   `xml:"failure,omitempty"`
	Error      *junitProblem   `xml:"error,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

// junit renders the campaign as one testsuite with one testcase per
// invariant: a <failure> when it was violated (every violation in the
// body), an <error> when there is no verdict (the engine failed, or the
// invariant was never checked), else a pass. The invariants are checked
// side by side all through the campaign, so each case's time is the
// campaign's checked time, and the suite's is that too, not their sum.
func junit(r campaign.Result, o Options) ([]byte, error) {
	took := seconds(r.Ended.D())
	suite := junitSuite{Name: SuiteName, Time: took, Properties: suiteProperties(r, o)}
	if !r.Started.IsZero() {
		suite.Timestamp = r.Started.UTC().Format(time.RFC3339)
	}
	for _, inv := range campaign.Invariants {
		jc := junitCase{Name: string(inv), Classname: SuiteName, Time: took,
			Properties: []junitProperty{{"checks", strconv.Itoa(r.Checks[inv])}}}
		s := statusOf(r, inv)
		switch s.Class {
		case "fail":
			jc.Failure = &junitProblem{Message: firstLine(s.First.What), Type: "violated", Text: violationsText(r, inv)}
			suite.Failures++
		case "error":
			jc.Error = &junitProblem{Message: s.Detail, Type: "no-verdict", Text: r.Error}
			suite.Errors++
		}
		if s.Class != "pass" {
			jc.SystemOut = replayText(o, inv)
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: SuiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: took, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

func suiteProperties(r campaign.Result, o Options) []junitProperty {
	s := r.Schedule
	var ps []junitProperty
	add := func(name, value string) {
		if value != "" {
			ps = append(ps, junitProperty{name, value})
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
