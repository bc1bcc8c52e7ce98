// Package state is the embedded provider's record of a running
// environment: state.json in the environment's state folder, written by the
// agent, read by every later command (reuse, status, down, and the clean-up
// of a run whose agent was killed), plus the machine-wide lock that keeps
// two commands from changing environments at once.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/internal/atomicfile"
)

// State is state.json.
type State struct {
	// Spec is what the agent was asked to bring up; SpecHash is Spec.Hash().
	Spec     clusters.Spec `json:"spec"`
	SpecHash string        `json:"specHash"`
	// AgentPID is the agent's pid; Marker (the state folder) is in the
	// command line of the agent and of every process it started.
	AgentPID int    `json:"agentPID"`
	Marker   string `json:"marker"`
	// Processes the agent started (control planes, CoreDNS).
	Processes []Process `json:"processes"`
	// Kubeconfig has one context per cluster.
	Kubeconfig string    `json:"kubeconfig"`
	Clusters   []Cluster `json:"clusters"`
	// DNS is the external DNS server's address.
	DNS string `json:"dns"`
	// Ready is set once every cluster serves and every node is Ready.
	Ready bool `json:"ready"`
	// Stopping is set when the agent starts tearing down: from then on
	// the environment is going, and nothing may reuse it.
	Stopping  bool      `json:"stopping,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	ReadyAt   time.Time `json:"readyAt,omitzero"`
}

// Process is one process the agent started.
type Process struct {
	Name   string `json:"name"`
	PID    int    `json:"pid"`
	Marker string `json:"marker"`
}

// Cluster is one running cluster.
type Cluster struct {
	Name      string   `json:"name"`
	Index     int      `json:"index"`
	APIServer string   `json:"apiServer"`
	Nodes     []string `json:"nodes"`
}

// File is the path of state.json in dir.
func File(dir string) string { return filepath.Join(dir, "state.json") }

// ErrNoState is wrapped by Load when dir holds no state.json.
var ErrNoState = errors.New("no state recorded")

// Load reads dir/state.json.
func Load(dir string) (*State, error) {
	data, err := os.ReadFile(File(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoState, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("state %s is damaged (%w); remove the folder after `harness down` fails", File(dir), err)
	}
	return &s, nil
}

// Save writes dir/state.json atomically.
func (s *State) Save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := atomicfile.Write(File(dir), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// Names lists the environments that have a folder under root.
func Names(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list environments in %s: %w", root, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(File(filepath.Join(root, e.Name()))); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}

// RemoveExceptLogs deletes everything in dir but its logs folder.
func RemoveExceptLogs(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	var errs []error
	for _, e := range ents {
		if e.Name() != "logs" {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}
