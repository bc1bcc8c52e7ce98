package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DetectionFile is where a selftest leaves its detection matrix in the
// artifacts folder; the run's reports include it when it is there.
const DetectionFile = "detection.json"

// DetectionMatrix is a selftest's result: for each deliberately planted
// defect, which scenarios caught it.
type DetectionMatrix struct {
	// Defects are the planted defects, in report order.
	Defects []Requirement `json:"defects"`
	// Scenarios are the scenario IDs that ran against them, in report order.
	Scenarios []string `json:"scenarios"`
	// Results hold one entry per defect and scenario that ran.
	Results []Detection `json:"results"`
}

// Detection is whether one scenario caught one planted defect.
type Detection struct {
	Defect   string `json:"defect"`
	Scenario string `json:"scenario"`
	// Caught: the scenario did not pass with the defect planted.
	Caught bool `json:"caught"`
	// Observed is the outcome or reason seen ("fail: unknown-authority").
	Observed string `json:"observed,omitempty"`
}

// Find returns the result for defect and scenario.
func (m *DetectionMatrix) Find(defect, scenario string) (Detection, bool) {
	for _, d := range m.Results {
		if d.Defect == defect && d.Scenario == scenario {
			return d, true
		}
	}
	return Detection{}, false
}

// Write writes m to dir/detection.json.
func (m *DetectionMatrix) Write(dir string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, DetectionFile), append(data, '\n'))
}

// ReadDetection reads dir/detection.json; nil, nil when there is none.
func ReadDetection(dir string) (*DetectionMatrix, error) {
	data, err := os.ReadFile(filepath.Join(dir, DetectionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m DetectionMatrix
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("detection matrix %s: %w", filepath.Join(dir, DetectionFile), err)
	}
	return &m, nil
}
