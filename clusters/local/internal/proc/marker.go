package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// MarkerEnv is the environment variable every process of an environment
// carries (the agent, the control planes, CoreDNS, every pod process); its
// value is the environment's state folder, whose base name is the
// environment's name. `up` and `down` find leftovers by it in
// /proc/<pid>/environ, with or without a state file, and never signal a
// process without it.
const MarkerEnv = "NVCF_HARNESS_ENV"

// MarkerVar is MarkerEnv=env, for a command's environment.
func MarkerVar(env string) string { return MarkerEnv + "=" + env }

// Processes are started with Pdeathsig=SIGKILL so that they die with the
// agent even when it is killed with SIGKILL. The kernel ties that signal
// to the *thread* that forked the child, not to the process, and Go ends a
// thread when a goroutine that locked it exits; a child started from an
// arbitrary goroutine could then be killed at random, long before the
// agent ends. So every such child is started from one goroutine locked to
// its thread for the life of the process: that thread never exits while
// the agent runs.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// StartPinned starts cmd from the pinned spawner thread (see above); use it
// for every command whose SysProcAttr sets Pdeathsig.
func StartPinned(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}

// Marked is a running process that carries MarkerEnv.
type Marked struct {
	PID int
	// Env is the marker's value: the environment's state folder.
	Env string
	// Argv is the process's command line.
	Argv []string
}

// Scan lists every process on the machine that carries MarkerEnv, except
// this process. Processes that exit while it reads are skipped.
func Scan() ([]Marked, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("scan processes: %w", err)
	}
	var out []Marked
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, ok := EnvOf(pid)
		if !ok {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		var argv []string
		for _, a := range bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0}) {
			argv = append(argv, string(a))
		}
		out = append(out, Marked{PID: pid, Env: env, Argv: argv})
	}
	return out, nil
}

// EnvOf returns the value of MarkerEnv in pid's environment.
func EnvOf(pid int) (string, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", false
	}
	prefix := []byte(MarkerEnv + "=")
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok && len(v) > 0 {
			return string(v), true
		}
	}
	return "", false
}

// KillMarked stops pid only if it still carries MarkerEnv=env: SIGTERM,
// then SIGKILL after grace (grace 0: SIGKILL at once), waiting on a pidfd
// for it to exit. It returns whether it signalled.
func KillMarked(ctx context.Context, pid int, env string, grace time.Duration) (bool, error) {
	ours := func() bool { v, ok := EnvOf(pid); return ok && v == env }
	if !ours() {
		return false, nil
	}
	fd, err := pidfdOpen(pid)
	if err != nil {
		if err == syscall.ESRCH {
			return false, nil
		}
		return false, fmt.Errorf("kill pid %d: %w", pid, err)
	}
	defer syscall.Close(fd)
	if !ours() { // the pidfd now pins the pid; check again
		return false, nil
	}
	if grace > 0 {
		_ = pidfdSignal(fd, syscall.SIGTERM)
		if waitFD(ctx, fd, grace) {
			return true, nil
		}
	}
	_ = pidfdSignal(fd, syscall.SIGKILL)
	if waitFD(ctx, fd, 5*time.Second) {
		return true, nil
	}
	return true, fmt.Errorf("kill pid %d: still running after SIGKILL", pid)
}
