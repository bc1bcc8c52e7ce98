package hostlock

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Shared holders hold it together; an exclusive holder gets it only when
// none is left, and then keeps everyone else out.
func TestSharedTogetherExclusiveAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := lock(path, syscall.LOCK_SH|syscall.LOCK_NB)
	require.NoError(t, err)
	b, err := lock(path, syscall.LOCK_SH|syscall.LOCK_NB)
	require.NoError(t, err, "two shared holders at once")
	_, err = lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK, "no exclusive holder beside shared ones")
	require.NoError(t, a.Close())
	_, err = lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK, "not while one shared holder is left")
	require.NoError(t, b.Close())
	ex, err := lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	require.NoError(t, err, "alone once the shared holders are gone")
	_, err = lock(path, syscall.LOCK_SH|syscall.LOCK_NB)
	require.ErrorIs(t, err, syscall.EWOULDBLOCK, "no shared holder beside the exclusive one")
	require.NoError(t, ex.Close())
}

func TestSharedAndExclusiveRelease(t *testing.T) {
	Path = filepath.Join(t.TempDir(), "lock")
	t.Run("shared", func(t *testing.T) { Shared(t) })
	t.Run("exclusive", func(t *testing.T) { Exclusive(t) })
	f, err := lock(Path, syscall.LOCK_EX|syscall.LOCK_NB)
	require.NoError(t, err, "each test released it when it ended")
	require.NoError(t, f.Close())
}
