package campaignreport

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/campaign"
)

func sec(s float64) campaign.Span { return campaign.Span(time.Duration(s * float64(time.Second))) }

const hostileWhat = `region-a/stargate-1 still holds pylon-3 <script>alert(1)</script> 60s after it left`

// result is a campaign as the engine would leave it: five faults, some
// overlapping, one that failed to inject, samples every second, an I1
// violation in the settle period and an I4 one during the faults.
func result() campaign.Result {
	s := campaign.Schedule{Version: campaign.Version, Seed: 42, Topology: "three-regions",
		Duration: sec(120), Settle: sec(60), Faults: []campaign.Fault{
			{ID: 1, Kind: campaign.Partition, Target: "workers->region-a", Start: sec(10), Duration: sec(30)},
			{ID: 2, Kind: campaign.QUICLoss, Target: "workers->region-b", Params: map[string]string{"loss": "0.3", "delay": "150ms"}, Start: sec(25), Duration: sec(40)},
			{ID: 3, Kind: campaign.StargateKill, Target: "region-a", Start: sec(50), Duration: sec(5)},
			{ID: 4, Kind: campaign.PylonLeave, Target: "workers", Start: sec(60), Duration: sec(30)},
			{ID: 5, Kind: campaign.DNSSpoof, Target: "workers->region-c", Start: sec(95), Duration: sec(20)},
		}}
	r := campaign.Result{Schedule: s, Started: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC), Ended: sec(180),
		Pylons: []string{"pylon-1", "pylon-2", "pylon-3"}, BadPylons: []string{"pylon-bad"},
		Applied: []campaign.Applied{
			{ID: 1, Injected: sec(10.2), Healed: sec(40.3), Effect: "dropped 212 packets"},
			{ID: 2, Injected: sec(25.1), Healed: sec(65.4), Effect: "lost 31% of 1200 datagrams"},
			{ID: 3, Error: "exec into region-a/stargate-0: pod not found"},
			{ID: 4, Injected: sec(60.3), Healed: sec(90.1), Effect: "deleted pylon-3"},
			{ID: 5, Injected: sec(95.2), Healed: sec(115)},
		},
		Violations: []campaign.Violation{
			{Invariant: campaign.NoLeaks, At: sec(100), What: hostileWhat,
				Evidence: "region-a/stargate-1 registrations:\n  pylon-1\n  pylon-3", Active: []int{5}},
			{Invariant: campaign.Convergence, At: sec(170), What: "pylon-2 not held by region-b/stargate-0 55s after the last heal",
				Evidence: "region-b/stargate-0 holds: pylon-1 pylon-3"},
		},
		Checks: map[campaign.Invariant]int{},
		Scale: &campaign.Scale{Pylons: 200, ColdRegistration: sec(42), Reconverge: sec(31), RegistersPerSecond: 57.5,
			Refusals: 3, Notes: []string{"region-a's ingress saturated first (CPU)"}},
	}
	for t := 1; t <= 180; t++ {
		for _, inv := range campaign.Invariants {
			ok := true
			switch inv {
			case campaign.Convergence:
				ok = t < 150
			case campaign.NoLeaks:
				ok = t < 100 || t > 104
			}
			r.Samples = append(r.Samples, campaign.Sample{At: sec(float64(t)), Invariant: inv, OK: ok, Note: "6/6 Stargates hold 3 Pylons"})
			r.Checks[inv]++
		}
	}
	return r
}

func options() Options {
	return Options{Replay: "bin/harness campaign --schedule _artifacts/campaign/schedule.json",
		Shrunk: &Shrunk{Invariant: campaign.NoLeaks,
			Schedule: campaign.Schedule{Version: campaign.Version, Seed: 42, Topology: "three-regions", Duration: sec(120), Settle: sec(60),
				Faults: []campaign.Fault{{ID: 4, Kind: campaign.PylonLeave, Target: "workers", Start: sec(60), Duration: sec(30)}}},
			Trials: []campaign.Trial{{Faults: []int{1, 2, 3}, Violated: false}, {Faults: []int{4, 5}, Violated: true},
				{Faults: []int{5}, Err: "could not deploy"}, {Faults: []int{4}, Violated: true}},
			Replay: "bin/harness campaign --schedule _artifacts/campaign/schedule-shrunk.json"}}
}

type suites struct {
	Suites []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Time       string `xml:"time,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string   `xml:"name,attr"`
			Classname string   `xml:"classname,attr"`
			Time      string   `xml:"time,attr"`
			Failure   *problem `xml:"failure"`
			Error     *problem `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

type problem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// parseJUnit parses junit.xml and returns each testcase's outcome by
// name ("pass", "failure: message", "error: message") and the suite's
// properties.
func parseJUnit(t *testing.T, data []byte) (map[string]string, map[string]string, map[string]string) {
	t.Helper()
	var doc suites
	require.NoError(t, xml.Unmarshal(data, &doc))
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	require.Equal(t, "campaign", s.Name)
	require.Len(t, s.Cases, 4, "one testcase per invariant")
	require.Equal(t, 4, s.Tests)
	outcomes, bodies, props := map[string]string{}, map[string]string{}, map[string]string{}
	for _, c := range s.Cases {
		require.Equal(t, "campaign", c.Classname)
		require.Equal(t, s.Time, c.Time, "checked side by side, all the campaign long")
		switch {
		case c.Failure != nil:
			outcomes[c.Name], bodies[c.Name] = "failure: "+c.Failure.Message, c.Failure.Text
		case c.Error != nil:
			outcomes[c.Name], bodies[c.Name] = "error: "+c.Error.Message, c.Error.Text
		default:
			outcomes[c.Name] = "pass"
		}
	}
	var fails, errs int
	for _, o := range outcomes {
		fails += b2i(strings.HasPrefix(o, "failure"))
		errs += b2i(strings.HasPrefix(o, "error"))
	}
	require.Equal(t, fails, s.Failures)
	require.Equal(t, errs, s.Errors)
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	return outcomes, bodies, props
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	r, o := result(), options()
	require.NoError(t, Write(dir, r, o))

	var back campaign.Result
	data, err := os.ReadFile(filepath.Join(dir, ResultFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, r, back)
	require.Contains(t, string(data), "\n  \"schedule\": {", "indented")

	var sched campaign.Schedule
	data, err = os.ReadFile(filepath.Join(dir, ScheduleFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sched))
	require.Equal(t, r.Schedule, sched)
	data, err = os.ReadFile(filepath.Join(dir, ShrunkScheduleFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sched))
	require.Equal(t, o.Shrunk.Schedule, sched)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"campaign.json", "schedule.json", "schedule-shrunk.json", "junit.xml", "campaign.html", "summary.md"}, names, "no temporary file left")

	// Written again without a shrunk schedule, the folder offers none.
	require.NoError(t, Write(dir, r, Options{Replay: o.Replay}))
	_, err = os.Stat(filepath.Join(dir, ShrunkScheduleFile))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestJUnit(t *testing.T) {
	r, o := result(), options()
	data, err := junit(r, o)
	require.NoError(t, err)
	outcomes, bodies, props := parseJUnit(t, data)
	require.Equal(t, map[string]string{
		"I1-convergence": "failure: pylon-2 not held by region-b/stargate-0 55s after the last heal",
		"I2-fail-closed": "pass",
		"I3-invocations": "pass",
		"I4-no-leaks":    "failure: " + hostileWhat,
	}, outcomes)
	require.Contains(t, bodies["I4-no-leaks"], "at 1m40s: "+hostileWhat)
	require.Contains(t, bodies["I4-no-leaks"], "active faults: #5 dns-spoof workers->region-c")
	require.Contains(t, bodies["I4-no-leaks"], "    pylon-3\n", "the evidence, indented")
	require.Contains(t, bodies["I1-convergence"], "active faults: none")
	require.Equal(t, "42", props["seed"])
	require.Equal(t, "2m0s", props["duration"])
	require.Equal(t, "1m0s", props["settle"])
	require.Equal(t, "5", props["faults"])
	require.Equal(t, "3", props["pylons"])
	require.Equal(t, "FAIL", props["verdict"])
	require.Equal(t, o.Replay, props["replay"])
	require.Equal(t, "#4", props["shrunk.faults"])

	// An invariant never checked proves nothing: an error, not a pass.
	r.Checks[campaign.Invocations] = 0
	data, err = junit(r, o)
	require.NoError(t, err)
	outcomes, _, _ = parseJUnit(t, data)
	require.Equal(t, "error: never checked: proves nothing", outcomes["I3-invocations"])
	require.Equal(t, "pass", outcomes["I2-fail-closed"])

	// The engine failed: no verdict where nothing was seen; what was seen stands.
	r.Error = "read region-c's Stargates: connection refused"
	data, err = junit(r, o)
	require.NoError(t, err)
	outcomes, bodies, _ = parseJUnit(t, data)
	require.Equal(t, "error: engine failure, no verdict: "+r.Error, outcomes["I2-fail-closed"])
	require.Equal(t, "error: engine failure, no verdict: "+r.Error, outcomes["I3-invocations"])
	require.True(t, strings.HasPrefix(outcomes["I1-convergence"], "failure: "))
	require.Contains(t, bodies["I1-convergence"], "the engine failed after: "+r.Error)
}

func clean() campaign.Result {
	r := result()
	r.Violations = nil
	for i := range r.Samples {
		r.Samples[i].OK = true
	}
	return r
}

func TestJUnitAllHeld(t *testing.T) {
	data, err := junit(clean(), Options{})
	require.NoError(t, err)
	outcomes, _, props := parseJUnit(t, data)
	for _, inv := range campaign.Invariants {
		require.Equal(t, "pass", outcomes[string(inv)], inv)
	}
	require.Equal(t, "PASS", props["verdict"])
}

func TestSummary(t *testing.T) {
	r, o := result(), options()
	r.Checks[campaign.Invocations] = 0
	md := markdown(r, o)
	for _, inv := range campaign.Invariants {
		require.Contains(t, md, "- "+string(inv)+": **")
	}
	require.Contains(t, md, "**FAIL: 2 of 4 invariants violated (I1-convergence, I4-no-leaks)**")
	require.Contains(t, md, "- I1-convergence: **VIOLATED** at 2m50s: pylon-2 not held")
	require.Contains(t, md, "- I2-fail-closed: **held** (180 checks)")
	require.Contains(t, md, "- I3-invocations: **ERROR** never checked: proves nothing (0 checks)")
	require.Contains(t, md, "#3 stargate-kill region-a at 50s for 5s  → inject FAILED: exec into")
	require.Contains(t, md, "#2 quic-loss workers->region-b at 25s for 40s (delay=150ms loss=0.3)  → injected 25.1s, healed 1m5.4s")
	require.Contains(t, md, o.Replay)
	require.Contains(t, md, "## Shrunk schedule (I4-no-leaks)")
	require.Contains(t, md, "1 of 5 faults still violate I4-no-leaks (4 trials")
	require.Contains(t, md, o.Shrunk.Replay)
}

func TestText(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Text(&b, result()))
	out := b.String()
	require.Contains(t, out, "FAIL: 2 of 4 invariants violated")
	require.Contains(t, out, "  I1-convergence   VIOLATED    180 checks  at 2m50s: pylon-2")
	require.Contains(t, out, "  I2-fail-closed   held        180 checks\n")
	require.Contains(t, out, "fault #3 stargate-kill region-a: inject FAILED")

	b.Reset()
	require.NoError(t, Text(&b, clean()))
	require.Contains(t, b.String(), "PASS: all 4 invariants checked and held")
}
