package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

func TestFindsByPodCgroup(t *testing.T) {
	const other = "11111111-2222-3333-4444-555555555555"
	uidU := strings.ReplaceAll(uid, "-", "_")
	proc := t.TempDir()
	// Pids next to ours, so none of them is the calling process by chance.
	self := os.Getpid()
	cgroupfs, systemd, otherPod, substring, pause := self+1, self+2, self+3, self+4, self+5
	files := map[int]string{
		// cgroup v1, cgroupfs driver: several hierarchies name the pod.
		cgroupfs: "12:memory:/docker/abc/kubelet/kubepods/burstable/pod" + uid + "/c0ffee\n" +
			"11:cpu,cpuacct:/docker/abc/kubelet/kubepods/burstable/pod" + uid + "/c0ffee\n" +
			"0::/\n",
		// cgroup v2, systemd driver.
		systemd: "0::/system.slice/docker-abc.scope/kubelet.slice/kubelet-kubepods.slice/" +
			"kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + uidU +
			".slice/cri-containerd-c0ffee.scope\n",
		otherPod: "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" +
			strings.ReplaceAll(other, "-", "_") + ".slice/cri-containerd-c0ffee.scope\n" +
			"1:name=systemd:/kubepods/burstable/pod" + other + "/c0ffee\n",
		substring: "1:memory:/kubepods/burstable/pod" + uid + "x/c0ffee\n" +
			"0::/kubepods-pod" + uidU + ".slicex/pod" + uid + ".scope\n",
		// The calling process is never included, even in the pod's cgroup.
		self: "0::/kubepods/pod" + uid + "\n",
		// The sandbox's pause shares the pod's cgroup but is not crashed.
		pause: "0::/kubepods/burstable/pod" + uid + "/5a4d\n",
	}
	for pid, cg := range files {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cg), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(proc, strconv.Itoa(pause), "comm"), []byte("nvcf-pause\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(proc, "self"), 0o755))

	f := Finder{Proc: proc, NetnsDir: t.TempDir()}
	pids, err := f.PodPIDs(uid)
	require.NoError(t, err)
	require.ElementsMatch(t, []int{cgroupfs, systemd}, pids)

	pids, err = f.PodPIDs(other)
	require.NoError(t, err)
	require.Equal(t, []int{otherPod}, pids)

	// The pod's own segment at the end of the line (its pause or own cgroup).
	require.True(t, InPodCgroup([]byte("0::/kubepods/besteffort/pod"+uid), uid))
	require.True(t, InPodCgroup([]byte("0::/kubepods.slice/kubepods-pod"+uidU+".slice\n"), uid))
	require.False(t, InPodCgroup([]byte("0::/kubepods/besteffort/xpod"+uid), uid))
	require.False(t, InPodCgroup([]byte("0::/"), ""))
}
