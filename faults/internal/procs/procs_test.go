package procs

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

func TestFindsByEnvironmentAndKills(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), "NVCF_POD_UID="+uid)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	pids, err := Finder{}.PodPIDs(uid)
	require.NoError(t, err)
	require.Equal(t, []int{cmd.Process.Pid}, pids)

	hit, err := Kill(pids, syscall.SIGKILL)
	require.NoError(t, err)
	require.Equal(t, pids, hit)
	select {
	case err := <-exited:
		require.ErrorContains(t, err, "killed")
	case <-time.After(20 * time.Second):
		t.Fatal("the process survived SIGKILL")
	}
}

func TestFindsByNamedNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) not installed")
	}
	ns := "nvcf-ftest-" + uid[:8]
	require.NoError(t, exec.Command("ip", "netns", "add", ns).Run())
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	// No uid in the environment or command line: only the namespace tells.
	cmd := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	require.Equal(t, []string{ns}, Finder{}.NetnsOf(uid))
	require.Eventually(t, func() bool {
		pids, err := Finder{}.PodPIDs(uid)
		return err == nil && len(pids) == 1 && pids[0] == cmd.Process.Pid
	}, 20*time.Second, 10*time.Millisecond, "sleep must be found in its namespace once ip has entered it")
}
