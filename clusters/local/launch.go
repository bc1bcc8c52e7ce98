package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// ErrAgent is wrapped when the agent fails to bring the environment up.
var ErrAgent = errors.New("the provider agent failed")

// launch writes agent.json, starts the agent detached (own session, output
// in logs/agent.log) with the write end of a pipe, relays its progress and
// returns once it says ready. On failure or timeout the agent is stopped.
func (p *provider) launch(ctx context.Context, spec clusters.Spec, place plan.Env, bin binaries.Set, o clusters.UpOptions) error {
	dir := p.dir(spec.Name)
	if err := os.MkdirAll(agent.LogDir(dir), 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	agent.ClearPanic(dir) // an earlier agent's, already reported or superseded
	if err := agent.WriteConfig(dir, agent.Config{Spec: spec, Bin: bin, Images: p.o.Images, Place: place}); err != nil {
		return err
	}
	argv := p.o.AgentCommand
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find the harness binary to run the agent: %w", err)
		}
		argv = []string{exe, "agent"}
	}
	argv = append(append([]string{}, argv...), "--state", dir)
	logPath := agent.LogDir(dir) + "/agent.log"
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("agent log: %w", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("agent pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w} // fd 3
	// The marker, inherited by everything the agent starts: `up` and
	// `down` find the environment's processes by it, state file or not.
	cmd.Env = append(os.Environ(), agent.NotifyFDEnv+"=3", proc.MarkerVar(dir))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start agent %s: %w", argv[0], err)
	}
	w.Close()
	o.Logger.Info("agent started", "pid", cmd.Process.Pid, "log", logPath)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while we wait
	err = relay(ctx, r, o, p.o.ReadyTimeout)
	if err == nil {
		_ = cmd.Process.Release()
		return nil
	}
	// Failed: make sure the agent is gone, then clean what it left.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(p.o.StopTimeout):
		_ = cmd.Process.Kill()
		<-exited
	}
	if st, lerr := state.Load(dir); lerr == nil {
		err = errors.Join(err, p.stop(context.Background(), spec.Name, st, o.Logger))
	}
	return fmt.Errorf("%w: %w; agent log: %s%s", ErrAgent, err, logPath, clusters.LogTail(logPath, 15))
}

// relay copies the agent's progress lines until "ready", "error …", EOF
// (the agent died) or the timeout.
func relay(ctx context.Context, r *os.File, o clusters.UpOptions, timeout time.Duration) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("not ready after %s", timeout)
		case line, ok := <-lines:
			if !ok {
				return errors.New("the agent exited before it was ready")
			}
			kind, text, _ := strings.Cut(line, " ")
			switch kind {
			case agent.MsgReady:
				return nil
			case agent.MsgError:
				return errors.New(text)
			default:
				fmt.Fprintf(o.Progress, "  %s\n", text)
			}
		}
	}
}
