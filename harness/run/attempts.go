package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// PlanFile lists, one a line, every test a run plans; it is written
// before the first case runs.
const PlanFile = "plan.txt"

func writePlan(dir string, planned []reports.CaseResult) error {
	var b strings.Builder
	for _, p := range planned {
		b.WriteString(p.Name + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, PlanFile), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write the plan: %w", err)
	}
	return nil
}

// runAttempts runs the suite, then reruns its failed cases up to o.Reruns
// times, each in a fresh suite process that deploys their cells again,
// keeping every earlier attempt's evidence under attempts/<n>/ of
// cfg.Artifacts. It returns every planned test's result (NotRun errors for
// those that never reported) and the error of the last suite run. label
// names the environment in progress lines when the run has several.
func (o *Options) runAttempts(ctx context.Context, hb *heartbeat, cfg catalog.RunConfig, planned []reports.CaseResult, label string) ([]reports.CaseResult, error, error) {
	on := ""
	if label != "" {
		on = " on " + label
	}
	var (
		results []reports.CaseResult
		testErr error
	)
	for attempt := 1; ; attempt++ {
		cfgPath, err := catalog.WriteRunConfig(cfg.Artifacts, cfg)
		if err != nil {
			return nil, nil, err
		}
		if attempt == 1 {
			hb.Doing("running the suite%s: %d tests (cases start and end below; cells deploy as they come)", on, len(planned))
		} else {
			hb.Doing("attempt %d%s: running %d failed tests again in a fresh suite process", attempt, on, len(cfg.Only))
		}
		serr := o.suite(ctx, hb, cfg.Artifacts, cfgPath, cfg.Environment.ProcessEnv, attempt, label)
		got, err := reports.LoadCases(cfg.Artifacts)
		if err != nil {
			return nil, nil, err
		}
		testErr = serr // the last attempt's: a rerun that passed clears it
		if attempt == 1 {
			results, _ = reports.WithNotRun(got, planned)
		} else {
			// cases/ still holds the earlier attempts' passes; only the
			// rerun tests are this attempt's.
			got = slices.DeleteFunc(got, func(r reports.CaseResult) bool { return !slices.Contains(cfg.Only, r.Name) })
			results = reports.MergeAttempt(results, got, attempt)
		}
		again := rerunnable(results)
		if attempt > o.Reruns || len(again) == 0 || ctx.Err() != nil {
			break
		}
		cfg.Only = nil
		for i, r := range results {
			if !again[r.Name] {
				continue
			}
			if results[i], err = reports.ShelveAttempt(cfg.Artifacts, r); err != nil {
				return nil, nil, err
			}
			cfg.Only = append(cfg.Only, r.Name)
		}
	}
	return results, testErr, nil
}

// rerunnable are the failed and errored tests that ran (a test that never
// ran was cut short with its run, so it is not run again).
func rerunnable(results []reports.CaseResult) map[string]bool {
	out := map[string]bool{}
	for _, r := range results {
		if r.Outcome.Bad() && !r.NotRunYet() {
			out[r.Name] = true
		}
	}
	return out
}

// suite runs the suite once in dir, its output in suite-output.log
// (attempt 1) or suite-output.<n>.log, its progress lines on the terminal
// (after label, when not empty).
func (o *Options) suite(ctx context.Context, hb *heartbeat, dir, cfgPath string, procEnv []string, attempt int, label string) error {
	name, junit := "suite-output.log", "suite-junit.xml"
	if attempt > 1 {
		name, junit = "suite-output."+strconv.Itoa(attempt)+".log", "suite-junit."+strconv.Itoa(attempt)+".xml"
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("suite output: %w", err)
	}
	defer f.Close()
	return runSuite(ctx, o.BinDir, dir, cfgPath, filepath.Join(dir, junit), procEnv, &suiteOutput{log: f, hb: hb, label: label})
}

// report assembles the run's report: its metadata, every case with the
// command that reruns a failed one alone, and the epic's requirements.
func (o *Options) report(start time.Time, results []reports.CaseResult, environments int) reports.Run {
	m := o.Meta
	m.Topology, m.TopologyHash = o.Topology.Name, topologyHash(o)
	m.TimeScale, m.Parallel, m.Reruns, m.Start, m.WallTime = o.TimeScale, o.Parallel, o.Reruns, start, time.Since(start)
	m.Environments = environments
	m.Filters = map[string]string{}
	for k, v := range map[string]string{"run": o.Run, "layer": o.Layers, "label": o.Labels, "workload": o.Workloads, "trust": o.Trusts,
		"discovery": o.Discoveries, "profile": o.Profiles} {
		if v != "" {
			m.Filters[k] = v
		}
	}
	for i, r := range results {
		if r.Outcome != reports.Pass && r.Outcome != reports.Skip {
			results[i].Repro = o.Repro(r)
		}
	}
	layers := make([]string, len(catalog.Layers))
	for i, l := range catalog.Layers {
		layers[i] = string(l)
	}
	return reports.Run{Meta: m, Cases: results, Layers: layers, Requirements: catalog.EpicRequirements()}
}

// Repro is the command that runs the case r alone and keeps the clusters
// up for a look afterwards. It names every axis of r's cell, the defaults
// too: left out, a filter selects every value of its axis, and the case
// would run in other cells as well (e.g. under DNS discovery besides
// EndpointSlice).
func (o *Options) Repro(r reports.CaseResult) string {
	args := []string{filepath.Join(o.BinDir, "harness"), "run", "--topology", o.TopologyRef}
	for _, a := range o.ProviderArgs {
		args = append(args, shellQuote(a))
	}
	args = append(args, "--run", shellQuote("^"+r.ID+"$"))
	if c, err := matrix.ParseCell(r.Cell); err == nil {
		args = append(args, "--workload", string(c.Workload), "--trust", string(c.Trust),
			"--discovery", string(c.Discovery), "--profile", string(c.Profile))
	}
	if im := imagesFlag(o.Images); im != "" {
		args = append(args, "--images", shellQuote(im))
	}
	if o.Flavor != "" {
		args = append(args, "--flavor", string(o.Flavor))
	}
	if o.NVCFBinDir != "" {
		args = append(args, "--nvcf-bin-dir", shellQuote(o.NVCFBinDir))
	}
	if len(o.Real) > 0 {
		args = append(args, "--real", strings.Join(o.Real, ","))
	}
	if o.Proof != "" {
		args = append(args, "--proof", string(o.Proof))
	}
	if o.TimeScale != 1 {
		args = append(args, "--time-scale", strconv.FormatFloat(o.TimeScale, 'g', -1, 64))
	}
	args = append(args, "--artifacts", shellQuote(o.Artifacts+"-repro"), "--keep")
	return strings.Join(args, " ")
}

// downHint is the command that brings kept clusters down: on a provider
// other than the embedded one it names it.
func (o *Options) downHint() string {
	hint := "harness down --topology " + o.TopologyRef
	if len(o.ProviderArgs) >= 2 && o.ProviderArgs[0] == "--provider" {
		hint += " --provider " + o.ProviderArgs[1]
	}
	return hint
}

// imagesFlag renders images as `--images` takes them.
func imagesFlag(im manifests.Images) string {
	var parts []string
	for _, c := range manifests.ImageComponents {
		if ref := *im.Field(c); ref != "" {
			parts = append(parts, c+"="+ref)
		}
	}
	return strings.Join(parts, ",")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// topologyHash is a digest of the parsed topology: two runs with the same
// hash ran against the same clusters, roles and addresses.
func topologyHash(o *Options) string {
	data, err := json.Marshal(o.Topology)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])[:16]
}
