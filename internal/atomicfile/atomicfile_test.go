package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The file holds all of the new content, with the mode asked for whatever
// the umask and whatever mode the old file had, and no temporary file stays.
func TestWriteReplacesWholly(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(p, []byte("old content that is longer than the new"), 0o600))

	require.NoError(t, Write(p, []byte(`{"new":true}`), 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, `{"new":true}`, string(b))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "perm is set exactly, not masked by the umask")

	require.NoError(t, Write(p, []byte("again"), 0o600))
	fi, err = os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	requireOnly(t, dir, "state.json")
}

func TestWriteFuncStreams(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big")
	chunk := strings.Repeat("x", 1<<16)
	require.NoError(t, WriteFunc(p, 0o644, func(w io.Writer) error {
		for range 16 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return err
			}
		}
		return nil
	}))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, int64(16<<16), fi.Size())
	requireOnly(t, dir, "big")
}

// A fill that fails half-way leaves the old file as it was and no
// temporary file behind.
func TestWriteFuncFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "journal.json")
	require.NoError(t, Write(p, []byte("old"), 0o600))
	boom := errors.New("boom")
	err := WriteFunc(p, 0o600, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of the n")
		return boom
	})
	require.ErrorIs(t, err, boom)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(b))
	requireOnly(t, dir, "journal.json")
}

// A target that cannot be replaced (a folder) fails after the write, and the
// temporary file is removed all the same.
func TestWriteFailedRenameLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "record")
	require.NoError(t, os.Mkdir(p, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p, "inside"), nil, 0o600))
	require.Error(t, Write(p, []byte("x"), 0o600))
	requireOnly(t, dir, "record")
}

func TestWriteIntoAMissingFolderFails(t *testing.T) {
	require.Error(t, Write(filepath.Join(t.TempDir(), "no", "such"), []byte("x"), 0o600))
}

func requireOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	require.ElementsMatch(t, names, got, "temporary files left in %s", dir)
}
