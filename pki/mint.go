package pki

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Minter mints PKI folders. The zero value is ready to use.
type Minter struct {
	// Logger receives what Mint decided (reuse or re-mint, and why); nil
	// discards.
	Logger *slog.Logger
}

// Mint is (&Minter{}).Mint.
func Mint(ctx context.Context, req Request, dir string) (*Manifest, error) {
	return (&Minter{}).Mint(ctx, req, dir)
}

// Mint makes the PKI for req in dir and returns its manifest. When dir
// already holds a folder minted from the same inputs (request and system
// roots), with intact files, whose time-relative certificates still have at
// least a quarter of the validity left, it is reused and nothing is minted
// (Manifest.Reused). Otherwise a new folder is minted beside dir and swapped
// in. dir is made 0700 and keys 0600. A non-empty dir without a manifest is
// refused rather than overwritten. One Mint per folder at a time.
func (mt *Minter) Mint(ctx context.Context, req Request, dir string) (*Manifest, error) {
	log := mt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("pki request: %w", err)
	}
	if dir == "" {
		return nil, errors.New("output folder: empty path; give the folder to mint into")
	}
	n := req.normalized()
	sys, sysInfo, err := readSystemRoots(n.SystemRoots)
	if err != nil {
		return nil, err
	}
	if !sysInfo.Present {
		log.Warn("system roots absent: the merged trust bundle holds only the custom root", "path", n.SystemRoots)
	}
	hash := inputHash(n, sysInfo.SHA256)
	now := time.Now().UTC()

	if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
		return nil, fmt.Errorf("output folder %q exists and is not a folder; choose another path", dir)
	}
	_, merr := os.Stat(filepath.Join(dir, manifestFile))
	switch old, err := Load(dir); {
	case err == nil:
		why := old.staleness(hash, now)
		if why == "" {
			old.Reused = true
			log.Info("pki folder reused", "dir", dir, "minted", old.MintedAt)
			return old, nil
		}
		log.Info("pki folder re-minted", "dir", dir, "why", why)
	case merr == nil:
		// Our folder, but its manifest is unreadable or from another format.
		log.Info("pki folder re-minted", "dir", dir, "why", err)
	default:
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			return nil, fmt.Errorf("output folder %q is not empty and holds no %s; choose an empty or new folder", dir, manifestFile)
		}
	}

	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output folder %q: %w; choose a folder you can write", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".mint-")
	if err != nil {
		return nil, fmt.Errorf("output folder %q: %w; choose a folder you can write", dir, err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	m := &Manifest{Format: formatTag, InputHash: hash, MintedAt: now, Validity: n.Validity.String(), Request: n, System: sysInfo}
	b := &builder{ctx: ctx, dir: tmp, now: now, req: n, sys: sys, m: m}
	if err := b.build(); err != nil {
		return nil, fmt.Errorf("mint pki into %q: %w", dir, err)
	}
	doc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, manifestFile), append(doc, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("output folder %q: %w", dir, err)
	}
	if err := swap(tmp, dir); err != nil {
		return nil, err
	}
	m.Dir = dir
	log.Info("pki minted", "dir", dir, "artifacts", len(m.Artifacts), "took", time.Since(now))
	return m, nil
}

// swap moves the freshly minted tmp into place at dir, replacing an old
// folder only once the new one is complete.
func swap(tmp, dir string) error {
	if err := os.Chmod(tmp, 0o700); err != nil {
		return fmt.Errorf("output folder %q: %w", dir, err)
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("output folder %q: %w", dir, err)
		}
		return nil
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("output folder %q: move the old folder aside: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		return fmt.Errorf("output folder %q: %w", dir, err)
	}
	return os.RemoveAll(old)
}
