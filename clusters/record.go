package clusters

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// RecordFile is the file in an environment's state folder in which a
// provider that keeps no process of its own (existing, kind) records the
// environment.
const RecordFile = "environment.json"

// ReadRecord reads the record in dir into v. A missing record wraps
// ErrNotFound, so Status and Down can tell "no such environment" apart.
func ReadRecord(dir string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if errors.Is(err, os.ErrNotExist) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("state %s: %w", dir, err)
	}
	return nil
}

// WriteRecord writes v as the record in dir, readable by its owner only,
// atomically: a crash leaves the old record or the new, never a torn one
// that Status and Down could not read.
func WriteRecord(dir string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, RecordFile), b, 0o600)
}

// RecordedNames lists the folders under root that hold a record: the
// environments a provider has recorded there.
func RecordedNames(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), RecordFile)); err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
