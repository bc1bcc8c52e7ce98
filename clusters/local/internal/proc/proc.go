// Package proc starts, stops and recognises the embedded provider's
// processes. Every process is started in its own process group with its
// output in a log file and a parent-death signal (it dies with the agent,
// even one killed with SIGKILL), and is recognised later by a marker: the
// state folder in its command line (Ours) and MarkerEnv in its environment
// (Scan, KillMarked), so that a clean-up never signals a process that
// merely reuses a recorded pid.
package proc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Spec describes a process to start.
type Spec struct {
	// Name is how logs and state call it (e.g. "region-a/etcd").
	Name string
	// Argv is the binary and its arguments.
	Argv []string
	// Env is added to the agent's environment (which carries MarkerEnv,
	// so the process does too).
	Env []string
	// Log is the file that receives stdout and stderr (appended).
	Log string
	// Marker must occur in Argv; Ours uses it to recognise the process.
	Marker string
}

// Process is a started process.
type Process struct {
	Spec
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts s.
func Start(s Spec, log *slog.Logger) (*Process, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.Marker == "" || !strings.Contains(strings.Join(s.Argv, "\x00"), s.Marker) {
		return nil, fmt.Errorf("start %s: marker %q not in its arguments", s.Name, s.Marker)
	}
	f, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log: %w", s.Name, err)
	}
	defer f.Close()
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := StartPinned(cmd); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", s.Name, s.Argv[0], err)
	}
	log.Info("started", "process", s.Name, "pid", cmd.Process.Pid)
	p := &Process{Spec: s, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the exit error once Done is closed.
func (p *Process) Err() error { <-p.done; return p.err }

// Stop sends SIGTERM to the process group, waits up to grace, then SIGKILL.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("stop %s: pid %d did not exit after SIGKILL", p.Name, p.PID())
	}
}

// Ours reports whether pid runs a command line that contains marker. For a
// moment right after exec the kernel may show an empty command line, so a
// process just started can read as not ours; callers check long after.
func Ours(pid int, marker string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && marker != "" && strings.Contains(string(data), marker)
}

// Kill stops a process that this process did not start (one recorded by a
// killed agent): only if Ours(pid, marker), SIGTERM then SIGKILL after
// grace, waiting on a pidfd for it to exit. It returns whether it signalled.
func Kill(ctx context.Context, pid int, marker string, grace time.Duration) (bool, error) {
	if !Ours(pid, marker) {
		return false, nil
	}
	fd, err := pidfdOpen(pid)
	if err != nil {
		return false, fmt.Errorf("kill pid %d: %w", pid, err)
	}
	defer syscall.Close(fd)
	if !Ours(pid, marker) { // the pidfd now pins the pid; check again
		return false, nil
	}
	_ = pidfdSignal(fd, syscall.SIGTERM)
	if waitFD(ctx, fd, grace) {
		return true, nil
	}
	_ = pidfdSignal(fd, syscall.SIGKILL)
	if waitFD(ctx, fd, 5*time.Second) {
		return true, nil
	}
	return true, fmt.Errorf("kill pid %d: still running after SIGKILL", pid)
}

// WaitExit waits until pid exits or timeout passes; true if it exited.
func WaitExit(ctx context.Context, pid int, timeout time.Duration) bool {
	fd, err := pidfdOpen(pid)
	if err != nil {
		return errors.Is(err, syscall.ESRCH)
	}
	defer syscall.Close(fd)
	return waitFD(ctx, fd, timeout)
}
