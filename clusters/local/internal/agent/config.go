// Package agent is the embedded provider's long-lived process (`harness
// agent`, started detached by `harness up`). It owns every process and
// network object of an environment: it brings the clusters up in parallel,
// then their nodes, load balancers and the external DNS, records them in
// state.json, tells the launcher it is ready over an inherited pipe, and on
// SIGTERM tears everything down in order.
package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/internal/atomicfile"
)

// Config is agent.json, written by the launcher into the state folder.
type Config struct {
	Spec clusters.Spec `json:"spec"`
	// Bin are the control-plane binaries (already built).
	Bin binaries.Set `json:"bin"`
	// Images maps image references (or repositories) to local binaries.
	Images map[string]string `json:"images"`
	// Place is where the environment sits in the address plan: its
	// clusters' first index (0 unless another environment runs beside it).
	Place plan.Env `json:"place,omitzero"`
}

// ConfigFile is the path of agent.json in a state folder.
func ConfigFile(dir string) string { return filepath.Join(dir, "agent.json") }

// LogDir is where every component of the environment logs.
func LogDir(dir string) string { return filepath.Join(dir, "logs") }

// WriteConfig writes agent.json, atomically.
func WriteConfig(dir string, c Config) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode agent config: %w", err)
	}
	if err := atomicfile.Write(ConfigFile(dir), data, 0o600); err != nil {
		return fmt.Errorf("write agent config: %w", err)
	}
	return nil
}

// ReadConfig reads agent.json.
func ReadConfig(dir string) (Config, error) {
	var c Config
	data, err := os.ReadFile(ConfigFile(dir))
	if err != nil {
		return c, fmt.Errorf("agent config: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("agent config %s: %w", ConfigFile(dir), err)
	}
	return c, c.Spec.Validate()
}
