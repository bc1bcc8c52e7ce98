package proc

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStartOursStop runs `sleep 3001` under Start; the argument doubles as
// the marker, since it shows in the command line.
func TestStartOursStop(t *testing.T) {
	p, err := Start(Spec{Name: "t/sleep", Argv: []string{"sleep", "3001"}, Log: filepath.Join(t.TempDir(), "log"), Marker: "3001"}, nil)
	require.NoError(t, err)
	// Right after a vfork+exec the kernel may show an empty command line
	// for a moment (the new image's arguments are not mapped yet).
	require.Eventually(t, func() bool { return Ours(p.PID(), "3001") }, 5*time.Second, 10*time.Millisecond)
	require.False(t, Ours(p.PID(), "some-other-state-dir"))
	require.NoError(t, p.Stop(5*time.Second))
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	require.False(t, Ours(p.PID(), "3001"))
}

func TestStartRefusesMissingMarker(t *testing.T) {
	_, err := Start(Spec{Name: "t", Argv: []string{"true"}, Log: filepath.Join(t.TempDir(), "log"), Marker: "/state/x"}, nil)
	require.ErrorContains(t, err, "marker")
}

// Kill signals a process it did not start only when the marker matches.
func TestKillChecksMarker(t *testing.T) {
	cmd := exec.Command("sleep", "3002")
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return Ours(cmd.Process.Pid, "3002") }, 5*time.Second, 10*time.Millisecond)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	ctx := context.Background()

	killed, err := Kill(ctx, cmd.Process.Pid, "not-ours", time.Second)
	require.NoError(t, err)
	require.False(t, killed)
	require.True(t, Ours(cmd.Process.Pid, "3002"), "a process without the marker was signalled")

	// Kill waits on a pidfd, which turns readable when the process exits;
	// our Wait goroutine reaps it.
	killed, err = Kill(ctx, cmd.Process.Pid, "3002", 5*time.Second)
	require.NoError(t, err)
	require.True(t, killed)
	select {
	case err := <-waited:
		require.Error(t, err, "sleep should have died of SIGTERM")
	case <-time.After(5 * time.Second):
		t.Fatal("process still running after Kill")
	}
}
