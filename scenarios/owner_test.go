package scenarios

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The suite stops when the run that started it exits, however it exits.
func TestWatchOwnerStopsWhenTheOwnerDies(t *testing.T) {
	owner := exec.Command("sleep", "60")
	require.NoError(t, owner.Start())
	stopped := make(chan struct{})
	require.NoError(t, WatchOwner(owner.Process.Pid, func() { close(stopped) }))
	select {
	case <-stopped:
		t.Fatal("stopped while the owner runs")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, owner.Process.Kill())
	_ = owner.Wait()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("not stopped after the owner was killed")
	}

	// An owner already gone stops at once; pid 0 watches nothing.
	gone := make(chan struct{})
	require.NoError(t, WatchOwner(owner.Process.Pid, func() { close(gone) }))
	<-gone
	require.NoError(t, WatchOwner(0, func() { t.Fatal("pid 0 has no owner") }))
}
