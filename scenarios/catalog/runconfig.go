package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
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
// up, the PKI it minted and the cases it planned. It is a file, so a user
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
	// Cases are the cases the runner planned (Plan, or a part of it from
	// Divide), by name (Case.Name, CaseNames), in the order they run. The
	// suite runs exactly these, in this order (Resolve), and derives
	// nothing from filters; it refuses a name the catalogue lacks.
	Cases []string `json:"cases"`
	// Only narrows the run to these test names (a rerun of failed cases):
	// tests of Cases, a fail-closed case's control-config test among them.
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
	// snapshot's list); the suite reads what the components accept from
	// it (scenarios' buildOf).
	NVCFBinDir string `json:"nvcfBinDir,omitempty"`
	// Defect switches registered defects on in one role: set by `harness
	// selftest` only, never by `harness run`.
	Defect manifests.Defect `json:"defect,omitzero"`
	// TimeScale multiplies every wait deadline (default 1); slow machines raise it.
	TimeScale float64 `json:"timeScale,omitempty"`
	// Parallel is how many isolated cases of a cell run at the same time
	// (World.CellRun); 0 or 1 runs every case one after another.
	Parallel int `json:"parallel,omitempty"`
	// Campaign, when set, makes the suite run a fault campaign
	// (TestCampaign) on one cell instead of cases; Cases may then be empty.
	Campaign *CampaignConfig `json:"campaign,omitempty"`
	// OwnerPID is the `harness run` that started the suite (0: none, a run
	// by hand). When it exits, killed with SIGKILL say, the suite stops as
	// on Ctrl-C (see WatchOwner).
	OwnerPID int `json:"ownerPID,omitempty"`
}

// CampaignConfig is what `harness campaign` asks of the suite.
type CampaignConfig struct {
	// Cell is deployed once; the campaign's Pylons are variants of its Pylon.
	Cell matrix.Cell `json:"cell"`
	// Schedule is the path of the schedule file (model/campaign), Result
	// the path the suite writes its campaign.Result to.
	Schedule string `json:"schedule"`
	Result   string `json:"result"`
	// Pylons is how many good campaign Pylons run (each must converge),
	// BadPylons how many trust the wrong root (none may ever register).
	Pylons    int `json:"pylons"`
	BadPylons int `json:"badPylons"`
	// Scale measures the cold registration of the Pylons and their
	// re-convergence after a rollout of every region's Stargates.
	Scale bool `json:"scale,omitempty"`
}

// CellOr is the cell the suite deploys first: the campaign's, else the
// first case's.
func (c *CampaignConfig) CellOr(cases []Case) matrix.Cell {
	switch {
	case c != nil:
		return c.Cell
	case len(cases) > 0:
		return cases[0].Cell
	}
	return matrix.Cell{}
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
	case len(c.Cases) == 0 && c.Campaign == nil:
		return nil, fmt.Errorf("run config %q: no cases to run and no campaign (write it with `harness run` or `harness campaign`)", path)
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	return &c, nil
}

// ProofSource selects where a run's server-side proofs come from.
type ProofSource string

// The proof sources.
const (
	// ProofAuto: /status for a reference Stargate, /metrics and
	// ListModels for a real one (RunConfig.Real).
	ProofAuto ProofSource = ""
	// ProofFromStatus: /status, whatever the Stargate.
	ProofFromStatus ProofSource = "status"
	// ProofFromMetrics: /metrics and ListModels, as against a real
	// Stargate, even on the reference one (which serves both): the
	// metrics proofs' own check.
	ProofFromMetrics ProofSource = "metrics"
)

// ParseProofSource parses --proof.
func ParseProofSource(s string) (ProofSource, error) {
	switch p := ProofSource(s); p {
	case ProofAuto, ProofFromStatus, ProofFromMetrics:
		return p, nil
	}
	return "", fmt.Errorf("proof source %q: want %s or %s (empty: %s for a reference Stargate, %s for a real one)",
		s, ProofFromStatus, ProofFromMetrics, ProofFromStatus, ProofFromMetrics)
}

// RealRoles are the roles whose images can be NVCF's real components.
var RealRoles = []string{"stargate", "router", "pylon"}

// ParseReal parses --real, a comma list of RealRoles.
func ParseReal(s string) ([]string, error) {
	var out []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !slices.Contains(RealRoles, r) {
			return nil, fmt.Errorf("real role %q: want a comma list of %s", r, strings.Join(RealRoles, ", "))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// IsReal reports whether the run's role is NVCF's real component (the
// run's own setting, RunConfig.Real; never guessed from an image name).
func (c *RunConfig) IsReal(role string) bool { return c != nil && slices.Contains(c.Real, role) }
