// Command fakesuite stands in for bin/scenarios.test in the runner's tests:
// it prints `go test -v` output as the real suite does, reports the first
// tests of the plan (plan.txt in its working folder, the artifacts) as
// passed with progress lines, and then, when FAKESUITE_BLOCK is set, waits
// for SIGINT like a suite in the middle of a long case; it then fails
// that case with the interrupt as its cause and exits as an interrupted
// `go test` does. FAKESUITE_FAIL names a test that fails
// unless the run config narrows the run to named tests (a rerun).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
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
	done, _ := strconv.Atoi(os.Getenv("FAKESUITE_REPORT"))
	var cfg struct {
		Only []string `json:"only"`
	}
	for _, a := range os.Args[1:] {
		if path, ok := strings.CutPrefix(a, "-harness.run="); ok {
			data, _ := os.ReadFile(path)
			_ = json.Unmarshal(data, &cfg)
		}
	}
	// A shard of a run over several environments names its whole part
	// in Only, and reports all of it unless FAKESUITE_REPORT says how
	// many; a rerun names fewer tests than its folder's plan.
	rerun := len(cfg.Only) > 0 && len(cfg.Only) < len(plan)
	if rerun || (len(cfg.Only) > 0 && os.Getenv("FAKESUITE_REPORT") == "") {
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
