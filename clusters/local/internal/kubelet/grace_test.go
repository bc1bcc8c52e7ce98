package kubelet

import (
	"bufio"
	"log/slog"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A second deletion with a shorter grace period shortens a termination
// under way, as the kubelet does: a container that ignores SIGTERM is
// killed once the shorter period, counted from the SIGTERM, has passed,
// not the pod's first one.
func TestShorterGraceCutsATerminationShort(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line, "the shell ignores SIGTERM from here on")
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	r := &podRuntime{log: slog.New(slog.DiscardHandler), cancel: func() {}, graceCut: make(chan struct{})}
	long := int64(3600)
	r.stop(&long)
	done := make(chan struct{})
	go func() { r.terminate(cmd, exited); close(done) }()

	longer := int64(7200)
	r.stop(&longer) // a longer period never extends the first
	g, _ := r.currentGrace()
	require.Equal(t, time.Hour, g)
	one := int64(1)
	r.stop(&one)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the termination still waits for the first grace period (an hour)")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "killed by SIGKILL: %v", cmd.ProcessState)
}
