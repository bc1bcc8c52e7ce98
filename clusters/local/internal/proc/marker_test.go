package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// When PROC_TEST_AGENT is set, the test binary plays an agent: it starts
// `sleep` under Start from a goroutine that then exits with its thread
// locked (so the thread ends), prints the child's pid and waits to be
// killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROC_TEST_AGENT"); dir != "" {
		pids := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread exits with the goroutine
			p, err := Start(Spec{Name: "t/sleep", Argv: []string{"sh", "-c", "exec sleep 3002", dir}, Log: filepath.Join(dir, "log"), Marker: dir}, nil)
			if err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			pids <- p.PID()
		}()
		fmt.Println(<-pids)
		time.Sleep(2 * time.Second) // the forking goroutine's thread is gone by now
		fmt.Println("alive")
		select {}
	}
	os.Exit(m.Run())
}

// A process started by Start carries the marker in its environment, is
// found by Scan, survives the end of the thread that asked for it, and dies
// with its agent when that is killed with SIGKILL.
func TestMarkedAndDiesWithAgent(t *testing.T) {
	dir := t.TempDir()
	agent := exec.Command(os.Args[0], "-test.run=^$")
	agent.Env = append(os.Environ(), "PROC_TEST_AGENT="+dir, MarkerVar(dir))
	out, err := agent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, agent.Start())
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan())
	pid, err := strconv.Atoi(sc.Text())
	require.NoError(t, err, sc.Text())

	require.True(t, sc.Scan())
	require.Equal(t, "alive", sc.Text())
	env, ok := EnvOf(pid)
	require.True(t, ok, "the child carries %s", MarkerEnv)
	require.Equal(t, dir, env)
	ms, err := Scan()
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(ms, func(m Marked) bool { return m.PID == pid && m.Env == dir }), "Scan finds pid %d", pid)
	require.NoError(t, syscall.Kill(pid, 0), "the child outlived its forking thread")

	require.NoError(t, agent.Process.Signal(syscall.SIGKILL))
	_ = agent.Wait()
	require.Eventually(t, func() bool { _, ok := EnvOf(pid); return !ok }, 5*time.Second, 20*time.Millisecond,
		"pid %d outlived its agent", pid)
}

// KillMarked signals only a process whose marker matches.
func TestKillMarked(t *testing.T) {
	cmd := exec.Command("sleep", "3003")
	cmd.Env = append(os.Environ(), MarkerVar("/env/a"))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	go func() { _ = cmd.Wait() }()
	require.Eventually(t, func() bool { v, _ := EnvOf(cmd.Process.Pid); return v == "/env/a" }, 5*time.Second, 10*time.Millisecond)
	killed, err := KillMarked(context.Background(), cmd.Process.Pid, "/env/b", 0)
	require.NoError(t, err)
	require.False(t, killed)
	killed, err = KillMarked(context.Background(), cmd.Process.Pid, "/env/a", time.Second)
	require.NoError(t, err)
	require.True(t, killed)
}
