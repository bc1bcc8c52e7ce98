// Package procs finds the processes of a pod without asking Kubernetes, in
// three ways: by the pod's named network namespace
// (`nvcf-<cluster>-<first 8 of uid>`, as `ip netns pids` does) and by the
// pod UID in a process's environment or command line, which find the pods
// of the embedded provider's process kubelet; and by the pod UID in the
// kubelet's cgroup path of a process (`/proc/<pid>/cgroup`), which finds the
// pods of kind clusters, whose containerd runs inside privileged Docker node
// containers on this host.
package procs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Finder reads /proc and the named network namespaces.
type Finder struct {
	// Proc is the proc mount (default /proc).
	Proc string
	// NetnsDir holds named namespaces (default /run/netns).
	NetnsDir string
}

func (f Finder) proc() string {
	if f.Proc == "" {
		return "/proc"
	}
	return f.Proc
}

func (f Finder) netnsDir() string {
	if f.NetnsDir == "" {
		return "/run/netns"
	}
	return f.NetnsDir
}

// NetnsOf returns the names of the pod namespaces `nvcf-*-<uid8>` for uid.
func (f Finder) NetnsOf(uid string) []string {
	// As the provider names them: the uid without dashes, cut to 8.
	short := strings.ReplaceAll(uid, "-", "")
	if len(short) < 8 {
		return nil
	}
	short = short[:8]
	entries, _ := os.ReadDir(f.netnsDir())
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "nvcf-") && strings.HasSuffix(n, "-"+short) {
			out = append(out, n)
		}
	}
	return out
}

type inode struct{ dev, ino uint64 }

func statInode(path string) (inode, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return inode{}, false
	}
	return inode{uint64(st.Dev), st.Ino}, true
}

// InPodCgroup tells whether the content of a /proc/<pid>/cgroup file puts
// the process in the kubelet's cgroup of the pod with uid: on any line
// (cgroup v1 has one per hierarchy, v2 one), a path segment `pod<uid>`
// (cgroupfs driver, `.../kubepods/burstable/pod<uid>/<container>`) or a
// segment ending `-pod<uid with _ for ->.slice` (systemd driver,
// `.../kubepods-burstable-pod<uid_>.slice/cri-containerd-<id>.scope`).
func InPodCgroup(content []byte, uid string) bool {
	if uid == "" {
		return false
	}
	cgroupfs := "pod" + uid
	systemd := "-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"
	for _, line := range strings.Split(string(content), "\n") {
		// hierarchy-ID:controller-list:cgroup-path; the path may hold ':'.
		path := line
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
			path = parts[2]
		}
		for _, seg := range strings.Split(strings.TrimSpace(path), "/") {
			if seg == cgroupfs || strings.HasSuffix(seg, systemd) {
				return true
			}
		}
	}
	return false
}

// PodPIDs returns the pids of the pod with uid: every process in one of
// its named namespaces, plus every process whose cgroup is the pod's (see
// InPodCgroup) but its sandbox's pause, plus every process whose
// environment or command line names the uid. The calling process is never
// included.
func (f Finder) PodPIDs(uid string) ([]int, error) {
	if uid == "" {
		return nil, errors.New("procs: empty pod uid")
	}
	want := map[inode]bool{}
	for _, n := range f.NetnsOf(uid) {
		if in, ok := statInode(filepath.Join(f.netnsDir(), n)); ok {
			want[in] = true
		}
	}
	entries, err := os.ReadDir(f.proc())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.proc(), err)
	}
	self := os.Getpid()
	needle := []byte(uid)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join(f.proc(), e.Name())
		if len(want) > 0 {
			if in, ok := statInode(filepath.Join(dir, "ns", "net")); ok && want[in] {
				out = append(out, pid)
				continue
			}
		}
		if cg, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil && InPodCgroup(cg, uid) {
			// The sandbox's pause process shares the pod's cgroup: killing
			// it would replace the sandbox, not crash a container.
			if !isPause(dir) {
				out = append(out, pid)
			}
			continue
		}
		if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil && bytes.Contains(env, needle) {
			out = append(out, pid)
			continue
		}
		if cmd, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && bytes.Contains(cmd, needle) {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Kill sends sig to every pid and returns the ones it reached.
func Kill(pids []int, sig syscall.Signal) ([]int, error) {
	var hit []int
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil {
			if !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
			}
			continue
		}
		hit = append(hit, pid)
	}
	return hit, errors.Join(errs...)
}

// isPause says whether the process in dir is a pod sandbox's pause
// (kind's node image runs nvcf-pause as it).
func isPause(dir string) bool {
	comm, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return false
	}
	c := strings.TrimSpace(string(comm))
	return c == "pause" || c == "nvcf-pause"
}
