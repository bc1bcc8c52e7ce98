package flock

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Holders of the lock never overlap, in one process as across processes
// (flock locks an open file description, so each Do is its own holder).
func TestDoSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	var mu sync.Mutex
	inside, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			require.NoError(t, Do(path, "test", func() error {
				mu.Lock()
				inside++
				most = max(most, inside)
				mu.Unlock()
				time.Sleep(time.Millisecond) // long enough for another holder to enter, were it let in
				mu.Lock()
				inside--
				mu.Unlock()
				return nil
			}))
		})
	}
	wg.Wait()
	require.Equal(t, 1, most)
}

func TestDoNamesTheLock(t *testing.T) {
	err := Do(filepath.Join(t.TempDir(), "missing", "x.lock"), "test", func() error { return nil })
	require.ErrorContains(t, err, "open the test lock")
}
