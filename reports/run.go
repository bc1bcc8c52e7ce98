package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// Run is everything the reports of one run render: its metadata, every
// planned case with its result, the epic requirements the cases trace to,
// and, when present, the selftest's detection matrix and the gate's verdict.
// It is written as report.json, from which every other report can be
// rendered again (`harness gate`, `harness report`).
type Run struct {
	Meta Meta `json:"meta"`
	// Cases are every planned case: results, and NotRun errors for those
	// that never reported.
	Cases []CaseResult `json:"cases"`
	// Layers fixes the order of layers in reports.
	Layers []string `json:"layers,omitempty"`
	// Requirements are the epic's requirements the catalogue traces to.
	Requirements []Requirement `json:"requirements,omitempty"`
	// Detection is the selftest's detection matrix (nil: none).
	Detection *DetectionMatrix `json:"detection,omitempty"`
	// Gate is the release gate's verdict (nil: no gate applied).
	Gate *Verdict `json:"gate,omitempty"`
}

// Meta describes a run: what ran, against what, how.
type Meta struct {
	// Version and Commit identify the harness.
	Version string `json:"version,omitempty"`
	Commit  string `json:"commit,omitempty"`
	// Topology is the topology's name, TopologyHash a digest of its
	// parsed content.
	Topology     string `json:"topology,omitempty"`
	TopologyHash string `json:"topologyHash,omitempty"`
	// Provider is the clusters provider (embedded, existing).
	Provider string `json:"provider,omitempty"`
	// Images are the component images and what they resolved to.
	Images []Image `json:"images,omitempty"`
	// Components are versions of what the run ran on (kubernetes, etcd, coredns, go).
	Components map[string]string `json:"components,omitempty"`
	// TimeScale multiplied every scenario deadline.
	TimeScale float64 `json:"timeScale,omitempty"`
	// Parallel is how many isolated cases of a cell ran at the same time.
	Parallel int `json:"parallel,omitempty"`
	// Environments is how many environments ran parts of the plan at the
	// same time.
	Environments int `json:"environments,omitempty"`
	// Reruns is how often a failed case could run again.
	Reruns int `json:"reruns,omitempty"`
	// Filters are the selection the run was started with (run, layer, label, workload, trust, discovery, profile).
	Filters map[string]string `json:"filters,omitempty"`
	Start   time.Time         `json:"start"`
	// WallTime is the run's duration, bring-up included.
	WallTime time.Duration `json:"wallTime,omitempty"`
}

// Image is one component image of a run.
type Image struct {
	// Component is the role (stargate, router, ingress, pylon, echo).
	Component string `json:"component"`
	// Ref is the image reference as deployed.
	Ref string `json:"ref"`
	// Digest identifies its content: an image digest, or, on the embedded
	// provider, the sha256 of the binary the image runs as.
	Digest string `json:"digest,omitempty"`
}

// Requirement is one requirement of the epic a scenario covers: a
// definition-of-done item or a defect to prove fixed.
type Requirement struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Summary summarizes the run's cases.
func (r Run) Summary() Summary {
	s := Summarize(r.Cases, r.Layers)
	s.WallTime, s.Provider = r.Meta.WallTime, r.Meta.Provider
	return s
}

// ReportFile is the run's data inside the artifacts folder.
const ReportFile = "report.json"

// JUnitFile is the JUnit report inside the artifacts folder.
const JUnitFile = "junit.xml"

// HTMLFile is the self-contained HTML report inside the artifacts folder.
const HTMLFile = "report.html"

// Write writes every report of r into dir: report.json, junit.xml,
// report.html, summary.md and summary.json.
func (r Run) Write(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, ReportFile), append(data, '\n')); err != nil {
		return err
	}
	junit, err := r.JUnit()
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, JUnitFile), junit); err != nil {
		return err
	}
	page, err := r.HTML(dir)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, HTMLFile), page); err != nil {
		return err
	}
	return r.Summary().Write(dir)
}

// ReadRun reads report.json from an artifacts folder (or the file itself).
func ReadRun(path string) (Run, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ReportFile)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Run{}, fmt.Errorf("no run report at %s: point at the artifacts folder of a `harness run`", path)
	}
	if err != nil {
		return Run{}, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, fmt.Errorf("run report %s: %w", path, err)
	}
	return r, nil
}

// writeFile writes a report file atomically, so a reader never sees half
// a report.
func writeFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
