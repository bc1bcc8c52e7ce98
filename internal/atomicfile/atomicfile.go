// Package atomicfile replaces a file so that a reader, or the next run
// after a crash or a power loss, finds either the old content or the new,
// never a part of it. Every state and record file is written here.
//
// It sits on the lowest floor so that every package can use it: the
// reports, the providers and fault injectors, the fixtures.
package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode perm exactly (not masked by the
// umask).
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc replaces path with what fill writes, with mode perm exactly.
// fill writes to a temporary file in path's folder, which is flushed to
// disk and then renamed over path; the folder is flushed last, so the
// rename itself survives a crash. When anything fails, path is left as it
// was and the temporary file is removed.
func WriteFunc(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = fill(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return syncDir(dir)
}

// syncDir flushes a folder's entries: without it a crash can lose the
// rename even though the file's content reached the disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
