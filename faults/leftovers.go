package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nvcf/conformance/faults/internal/journal"
	"github.com/nvcf/conformance/faults/internal/nft"
)

// Entry is a journaled fault: one that is active, or that a killed run
// left behind.
type Entry struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Kind    Kind      `json:"kind"`
	Target  string    `json:"target"`
	Params  string    `json:"params"`
	Started time.Time `json:"started"`
	// Until is when the fault is due to end (zero: open-ended).
	Until time.Time `json:"until,omitzero"`
	// PID is the owner process; Alive says whether it still runs.
	PID   int  `json:"pid"`
	Alive bool `json:"alive"`
}

func entryOf(e journal.Entry) Entry {
	return Entry{ID: e.ID, Name: e.Name, Kind: Kind(e.Kind), Target: e.Target, Params: e.Params, Started: e.Started, Until: e.Until, PID: e.PID, Alive: journal.Alive(e)}
}

// List returns the faults journaled in stateDir.
func List(stateDir string) ([]Entry, error) {
	j, err := journal.Open(stateDir)
	if err != nil {
		return nil, err
	}
	es, err := j.List()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		out = append(out, entryOf(e))
	}
	return out, nil
}

// CleanupLeftovers undoes every fault journaled in stateDir whose owner
// process no longer runs: it deletes the fault's nftables rules, restores
// Secrets and replica counts, and removes the entry. Faults of running
// processes are left alone. Every command that touches an environment
// calls it first. It returns the entries it cleaned.
func CleanupLeftovers(ctx context.Context, stateDir string, log *slog.Logger) ([]Entry, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	j, err := journal.Open(stateDir)
	if err != nil {
		return nil, err
	}
	es, err := j.List()
	if err != nil {
		return nil, err
	}
	var cleaned []Entry
	var errs []error
	for _, e := range es {
		if journal.Alive(e) {
			continue
		}
		if err := cleanup(ctx, e.Cleanup, log); err != nil {
			errs = append(errs, fmt.Errorf("clean up fault %s left by pid %d: %w", e.ID, e.PID, err))
			continue
		}
		if err := j.Remove(e.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("removed a fault left by a killed run", "id", e.ID, "name", e.Name, "target", e.Target)
		cleaned = append(cleaned, entryOf(e))
	}
	return cleaned, errors.Join(errs...)
}

func cleanup(ctx context.Context, c journal.Cleanup, log *slog.Logger) error {
	var errs []error
	if c.NFT != nil {
		if c.NFT.Netns != "" && !exists(filepath.Join("/run/netns", c.NFT.Netns)) {
			// The namespace went away, and its rules with it.
			log.Debug("fault rules gone with their namespace", "netns", c.NFT.Netns)
		} else {
			errs = append(errs, nft.Delete(ctx, c.NFT.Netns, c.NFT.Comment))
		}
	}
	if c.Secret != nil {
		if gone(c.Secret.Cluster, log) {
			log.Warn("cannot restore a rotated Secret: its environment is gone", "secret", c.Secret.Namespace+"/"+c.Secret.Name)
		} else {
			errs = append(errs, restoreSecret(ctx, *c.Secret))
		}
	}
	if c.Scale != nil {
		if gone(c.Scale.Cluster, log) {
			log.Warn("cannot restore replicas: the environment is gone", "workload", c.Scale.Namespace+"/"+c.Scale.Name)
		} else {
			errs = append(errs, restoreScale(ctx, *c.Scale))
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// gone reports whether a journaled cluster's kubeconfig no longer exists
// (the environment was brought down, taking the faulted objects with it).
func gone(c journal.Cluster, _ *slog.Logger) bool {
	return c.Kubeconfig == "" || !exists(c.Kubeconfig)
}

// StopOwners ends the processes that own the faults journaled in stateDir
// (a `harness fault inject`, a run's suite), before their environment goes
// down: SIGTERM, which makes them undo their faults and exit, then SIGKILL
// after grace; whatever they could not undo is cleaned as a leftover. A
// pid is signalled only while it is the same process (pid and start time)
// that journaled the fault. It returns how many owners it stopped.
func StopOwners(ctx context.Context, stateDir string, grace time.Duration, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !exists(stateDir) {
		return 0, nil // no environment, no journal: nothing to stop (and no folder to make)
	}
	j, err := journal.Open(stateDir)
	if err != nil {
		return 0, err
	}
	es, err := j.List()
	if err != nil {
		return 0, err
	}
	owners := map[int]journal.Entry{}
	for _, e := range es {
		if journal.Alive(e) {
			owners[e.PID] = e
		}
	}
	for pid, e := range owners {
		log.Info("stopping the owner of a fault", "pid", pid, "fault", e.ID)
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, e := range owners {
		for journal.Alive(e) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		if journal.Alive(e) {
			log.Warn("fault owner ignored SIGTERM; killing it", "pid", e.PID)
			_ = syscall.Kill(e.PID, syscall.SIGKILL)
		}
	}
	_, cerr := CleanupLeftovers(ctx, stateDir, log)
	return len(owners), cerr
}
