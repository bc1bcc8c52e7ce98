// Package journal persists the faults that are active right now to a file
// in the state directory, with what it takes to undo each one, so that the
// next command can remove what a killed run left behind. Writers from
// several processes serialise on an flock.
package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nvcf/conformance/faults/internal/flock"
	"github.com/nvcf/conformance/internal/atomicfile"
)

// FileName is the journal's file name inside the state directory.
const FileName = "faults.json"

// Entry is one active fault.
type Entry struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Kind     string    `json:"kind"`
	Target   string    `json:"target"`
	Params   string    `json:"params,omitempty"`
	Started  time.Time `json:"started"`
	Until    time.Time `json:"until,omitzero"`
	PID      int       `json:"pid"`
	PIDStart uint64    `json:"pidStart"`
	Cleanup  Cleanup   `json:"cleanup"`
}

// Cleanup is what a later process needs to undo a fault whose owner died.
// In-process proxies die with their owner; rules and API objects stay.
type Cleanup struct {
	// NFT: the fault's nftables rules, by comment, in a namespace.
	NFT *NFT `json:"nft,omitempty"`
	// Secret: restore a Secret's data.
	Secret *Secret `json:"secret,omitempty"`
	// Scale: restore a workload's replicas.
	Scale *Scale `json:"scale,omitempty"`
}

// NFT names rules in the table `inet nvcf_faults`.
type NFT struct {
	Netns   string `json:"netns,omitempty"`
	Comment string `json:"comment"`
}

// Cluster addresses one cluster's API.
type Cluster struct {
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context"`
}

// Secret is the original data of a Secret.
type Secret struct {
	Cluster
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Data      map[string][]byte `json:"data"`
}

// Scale is the original replica count of a workload.
type Scale struct {
	Cluster
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
}

// Journal is the file of one state directory.
type Journal struct{ dir string }

// Open returns the journal of dir, creating dir (0700) when missing.
func Open(dir string) (*Journal, error) {
	if dir == "" {
		return nil, errors.New("journal: empty state directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory %s: %w", dir, err)
	}
	return &Journal{dir: dir}, nil
}

// Path is the journal file's path.
func (j *Journal) Path() string { return filepath.Join(j.dir, FileName) }

// update runs fn on the entries under an exclusive lock and writes the
// result back (0600: entries may hold key material of Secrets).
func (j *Journal) update(fn func([]Entry) []Entry) error {
	return flock.Do(filepath.Join(j.dir, "faults.lock"), "journal", func() error { return j.rewrite(fn) })
}

// rewrite is update's work, under the lock.
func (j *Journal) rewrite(fn func([]Entry) []Entry) error {
	entries, err := j.read()
	if err != nil {
		return err
	}
	entries = fn(entries)
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encode journal: %w", err)
	}
	if err := atomicfile.Write(j.Path(), data, 0o600); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

func (j *Journal) read() ([]Entry, error) {
	data, err := os.ReadFile(j.Path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	var entries []Entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("parse journal %s (delete it after checking `nft list table inet nvcf_faults`): %w", j.Path(), err)
	}
	return entries, nil
}

// Put adds or replaces the entry with e.ID; PID and PIDStart default to
// the calling process.
func (j *Journal) Put(e Entry) error {
	if e.PID == 0 {
		e.PID = os.Getpid()
		e.PIDStart = StartTime(e.PID)
	}
	return j.update(func(es []Entry) []Entry {
		for i := range es {
			if es[i].ID == e.ID {
				es[i] = e
				return es
			}
		}
		return append(es, e)
	})
}

// Remove deletes the entry with id.
func (j *Journal) Remove(id string) error {
	return j.update(func(es []Entry) []Entry {
		out := es[:0]
		for _, e := range es {
			if e.ID != id {
				out = append(out, e)
			}
		}
		return out
	})
}

// List returns the entries.
func (j *Journal) List() ([]Entry, error) {
	var out []Entry
	err := j.update(func(es []Entry) []Entry { out = append(out, es...); return es })
	return out, err
}

// Alive reports whether the process that owns e still runs (same pid and
// same start time, so a reused pid does not count).
func Alive(e Entry) bool {
	if e.PID <= 0 {
		return false
	}
	st := StartTime(e.PID)
	return st != 0 && st == e.PIDStart
}

// StartTime returns a process's start time in clock ticks since boot
// (field 22 of /proc/<pid>/stat), or 0 when it does not run.
func StartTime(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); start time is field 22.
	if len(fields) < 20 {
		return 0
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}
