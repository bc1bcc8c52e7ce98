package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
)

// RunConfigEnv names the environment variable through which `harness run`
// hands the suite its RunConfig file; the flag -harness.run does the same.
const RunConfigEnv = "NVCF_HARNESS_RUN"

// RunConfigFile is the RunConfig's name inside the artifacts folder.
const RunConfigFile = "run.json"

// SuiteLog is the suite's structured log in the artifacts folder; the
// attempts of one run append to it.
const SuiteLog = "suite.log"

// RunConfig is what the runner hands the suite: the environment it brought
// up, the PKI it minted, the cells and the filter. It is a file, so a user
// can re-run the suite by hand with `go test ./scenarios/ -args -harness.run=FILE`.
type RunConfig struct {
	// Topology is the run's topology, parsed once by the runner.
	Topology *topology.Topology `json:"topology"`
	// Environment is what the clusters provider handed back.
	Environment *clusters.Environment `json:"environment"`
	// StateDir is the topology's state folder; the faults journal lives
	// there, so a killed run's faults are undone by the next command.
	StateDir string `json:"stateDir,omitempty"`
	// PKIDir is the minted PKI folder (package pki).
	PKIDir string `json:"pkiDir"`
	// Artifacts is the folder for evidence and per-case results.
	Artifacts string `json:"artifacts"`
	// Cells are the matrix cells to run, by name, in order.
	Cells []string `json:"cells"`
	// Run, Layers and Labels filter the catalogue (see ParseFilter).
	Run    string `json:"run,omitempty"`
	Layers string `json:"layers,omitempty"`
	Labels string `json:"labels,omitempty"`
	// Only narrows the run to these test names (a rerun of failed cases).
	Only []string `json:"only,omitempty"`
	// Images replace the reference images (empty: the reference ones).
	Images manifests.Images `json:"images,omitzero"`
	// Provider names where the clusters came from (embedded, existing);
	// the suite records it as a property of the run.
	Provider string `json:"provider,omitempty"`
	// Flavor is the manifests' flavor (empty: the reference one).
	Flavor manifests.Flavor `json:"flavor,omitempty"`
	// Real lists the roles (RealRoles) whose images are NVCF's real
	// components, as the user says (--real): neither the flavor (the
	// reference roles take NVCF's flags too) nor an image's name tells.
	// A real Stargate serves no /status, so the server-side proofs read
	// its /metrics and ListModels (proof.go).
	Real []string `json:"real,omitempty"`
	// Proof forces the source of the server-side proofs (--proof);
	// empty: /status for a reference Stargate, /metrics and ListModels
	// for a real one.
	Proof ProofSource `json:"proof,omitempty"`
	// NVCFBinDir names a folder of real NVCF binaries whose --help says
	// what the nvcf flavor's components accept (empty: the committed
	// snapshot's list); see RunConfig.Build.
	NVCFBinDir string `json:"nvcfBinDir,omitempty"`
	// Defect switches registered defects on in one role: set by `harness
	// selftest` only, never by `harness run`.
	Defect manifests.Defect `json:"defect,omitzero"`
	// TimeScale multiplies every wait deadline (default 1); slow machines raise it.
	TimeScale float64 `json:"timeScale,omitempty"`
	// Parallel is how many isolated cases of a cell run at the same time
	// (World.CellRun); 0 or 1 runs every case one after another.
	Parallel int `json:"parallel,omitempty"`
	// OwnerPID is the `harness run` that started the suite (0: none, a run
	// by hand). When it exits, killed with SIGKILL say, the suite stops as
	// on Ctrl-C (see WatchOwner).
	OwnerPID int `json:"ownerPID,omitempty"`
}

// WriteRunConfig writes c to dir/run.json and returns the path.
func WriteRunConfig(dir string, c RunConfig) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("artifacts folder %q: %w", dir, err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, RunConfigFile)
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("write run config: %w", err)
	}
	return p, nil
}

// ReadRunConfig reads and checks a RunConfig file.
func ReadRunConfig(path string) (*RunConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("run config: %w (write it with `harness run`)", err)
	}
	var c RunConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("run config %q: %w", path, err)
	}
	switch {
	case c.Topology == nil:
		return nil, fmt.Errorf("run config %q: no topology (write it with `harness run`)", path)
	case c.Environment == nil || c.Environment.Kubeconfig == "":
		return nil, fmt.Errorf("run config %q: no environment (bring one up with `harness up`)", path)
	case c.PKIDir == "":
		return nil, fmt.Errorf("run config %q: no PKI folder (mint one with `harness pki mint`)", path)
	case c.Artifacts == "":
		return nil, errors.New("run config: no artifacts folder")
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	return &c, nil
}
