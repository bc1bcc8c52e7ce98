// Command fakesuite stands in for bin/scenarios.test in the runner's tests:
// it prints `go test -v` output as the real suite does, reports the first
// tests of the plan (plan.txt in its working folder, the artifacts; all of
// them unless FAKESUITE_REPORT says how many) as passed with progress
// lines, and then, when FAKESUITE_BLOCK is set, waits for SIGINT like a
// suite in the middle of a long case; it then fails that case with the
// interrupt as its cause and exits as an interrupted `go test` does.
// FAKESUITE_FAIL names a test that fails unless the run config narrows the
// run to named tests (a rerun). As the real suite runs exactly the cases
// its run config names, the fake refuses (exit 2) a run config whose cases
// are not those of plan.txt, in its order.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nvcf/conformance/reports"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	f, err := os.Open("plan.txt")
	if err != nil {
		fmt.Println("no plan:", err)
		os.Exit(2)
	}
	var plan []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		plan = append(plan, sc.Text())
	}
	done, err := strconv.Atoi(os.Getenv("FAKESUITE_REPORT"))
	if err != nil {
		done = len(plan)
	}
	var cfg struct {
		Cases []string `json:"cases"`
		Only  []string `json:"only"`
	}
	for _, a := range os.Args[1:] {
		if path, ok := strings.CutPrefix(a, "-harness.run="); ok {
			data, _ := os.ReadFile(path)
			_ = json.Unmarshal(data, &cfg)
		}
	}
	if cases := casesOf(plan); !slices.Equal(cases, cfg.Cases) {
		fmt.Printf("the run config names the cases %v, not the plan's %v\n", cfg.Cases, cases)
		os.Exit(2)
	}
	// A rerun names the tests it runs again.
	rerun := len(cfg.Only) > 0
	if rerun {
		plan, done = cfg.Only, len(cfg.Only)
	}
	failed := false
	dir, _ := os.Getwd()
	p := reports.NewProgress(os.Stdout, reports.ProgressMarker, len(plan))
	fmt.Println("=== RUN   TestScenarios")
	for _, name := range plan[:min(done, len(plan))] {
		fmt.Println("=== RUN   TestScenarios/" + name)
		p.Start(name)
		id, cell, _ := strings.Cut(strings.TrimSuffix(name, "]"), "[")
		r := reports.CaseResult{Name: name, ID: strings.TrimSuffix(id, "/with-control-config"), Cell: cell, Outcome: reports.Pass,
			Kind: "case", Evidence: reports.EvidenceDir(dir, name), Start: time.Now()}
		if name == os.Getenv("FAKESUITE_FAIL") && !rerun {
			r.Outcome, r.Observed, r.Message, failed = reports.Fail, "unavailable", "no tunnel within 30s", true
		}
		if err := reports.WriteCase(r); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		p.End(name, r.Outcome, r.Message)
		fmt.Printf("--- %s: TestScenarios/%s (0.00s)\n", map[bool]string{true: "FAIL", false: "PASS"}[r.Outcome != reports.Pass], name)
	}
	if failed {
		fmt.Println("--- FAIL: TestScenarios (0.00s)")
		fmt.Println("FAIL")
		os.Exit(1)
	}
	if os.Getenv("FAKESUITE_BLOCK") != "" {
		name := plan[done]
		fmt.Println("=== RUN   TestScenarios/" + name)
		p.Start(name)
		start := time.Now()
		<-sig
		// As the real suite does, the case in flight ends as a failure
		// whose cause is the interrupt.
		id, cell, _ := strings.Cut(strings.TrimSuffix(name, "]"), "[")
		r := reports.CaseResult{Name: name, ID: strings.TrimSuffix(id, "/with-control-config"), Cell: cell, Kind: "case",
			Outcome: reports.Fail, Observed: "unknown", Message: "expected pass, got a failure: interrupt signal received",
			Evidence: reports.EvidenceDir(dir, name), Start: start, Duration: time.Since(start)}
		if err := reports.WriteCase(r); err != nil {
			fmt.Println(err)
		}
		p.End(name, r.Outcome, r.Message)
		fmt.Println("--- FAIL: TestScenarios (0.00s)")
		fmt.Println("FAIL")
		os.Exit(1)
	}
	fmt.Println("--- PASS: TestScenarios (0.00s)")
	fmt.Println("PASS")
}

// casesOf are the cases of tests, in order: a control-config test belongs
// to the case of its scenario in its cell.
func casesOf(tests []string) []string {
	var out []string
	for _, name := range tests {
		c := strings.Replace(name, "/with-control-config[", "[", 1)
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
