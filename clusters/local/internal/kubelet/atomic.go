package kubelet

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// file is one file of a volume: its content and mode.
type file struct {
	data []byte
	mode fs.FileMode
}

// writeAtomic makes dir hold exactly files (relative paths), switching all
// of them at once the way the kubelet does: the contents go to a fresh
// hidden folder "..<time>", the symlink "..data" is renamed onto it, and
// each top-level name is a symlink through "..data". A process reading a
// certificate and its key never sees one new and one old. Unchanged content
// is left alone; changed reports whether anything was rewritten.
func writeAtomic(dir string, files map[string]file) (changed bool, err error) {
	for p := range files {
		if err := checkRelPath(p); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if same(dir, files) {
		return false, nil
	}
	ts := filepath.Join(dir, fmt.Sprintf("..%d", time.Now().UnixNano()))
	if err := os.Mkdir(ts, 0o755); err != nil {
		return false, err
	}
	for p, f := range files {
		full := filepath.Join(ts, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, err
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(full, f.data, mode); err != nil {
			return false, err
		}
		if err := os.Chmod(full, mode); err != nil {
			return false, err
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmpLink := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(ts), tmpLink); err != nil {
		return false, err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, "..data")); err != nil {
		return false, err
	}
	top := map[string]bool{}
	for p := range files {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
		link := filepath.Join(dir, first)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(filepath.Join("..data", first), link); err != nil {
				return false, err
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); !strings.HasPrefix(n, "..") && !top[n] {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
	if old != "" && old != filepath.Base(ts) {
		_ = os.RemoveAll(filepath.Join(dir, old))
	}
	return true, nil
}

// same reports whether dir's current ..data holds exactly files.
func same(dir string, files map[string]file) bool {
	data := filepath.Join(dir, "..data")
	n := 0
	err := filepath.WalkDir(data+"/", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(data, p)
		f, ok := files[filepath.ToSlash(rel)]
		if !ok {
			return fs.ErrNotExist
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, f.data) {
			return fs.ErrNotExist
		}
		return nil
	})
	return err == nil && n == len(files)
}

// checkRelPath refuses absolute paths and any ".." in a volume file path.
func checkRelPath(p string) error {
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, "..") {
		return fmt.Errorf("volume file path %q: must be relative, without a leading '..'", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("volume file path %q: must not contain '..'", p)
		}
	}
	return nil
}
