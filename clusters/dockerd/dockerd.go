// Package dockerd starts and stops a Docker daemon for the harness (the kind
// provider's, CI's and the Docker-coexistence test's), and puts the host back
// as it was afterwards: Docker leaves its bridge, its iptables chains and a
// FORWARD policy of DROP behind when it stops, and turns global IPv4
// forwarding on.
//
// Its networks stay in the test range: the default bridge takes Bridge and
// user networks (kind's) come from Pools, both inside 198.18.0.0/15 and clear
// of the embedded provider's address plan (198.18.10-99.0/24 pods,
// 198.19.10-189.0/24 services and load balancers).
//
// A daemon started with Config.Detach outlives the process that started it
// (the kind provider's `up`); Start saves the host's state beside it, and
// Adopt, in a later process (its `down`), returns a Daemon whose Stop puts
// the host back.
//
// Where the machine's capability bounding set lacks CAP_SYS_RESOURCE,
// runc cannot start a privileged container ("unable to apply caps"); the
// daemon then runs every container through the shim (cmd/nvcf-runc), which
// drops that capability from the OCI spec and execs runc.
package dockerd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nvcf/conformance/internal/atomicfile"
)

// Defaults of Config: inside the test range, clear of the embedded plan.
var (
	DefaultBridge = netip.MustParsePrefix("198.18.200.1/24")
	DefaultPools  = netip.MustParsePrefix("198.18.208.0/20")
)

// capSysResource is CAP_SYS_RESOURCE's bit in the capability sets.
const capSysResource = 24

// ShimRuntime is the runtime name the shim is registered under.
const ShimRuntime = "nvcf-runc"

// Config is how Start runs the daemon. Zero values take the defaults named.
type Config struct {
	// Dir holds the daemon's socket, pid file, exec root and log. Required.
	Dir string
	// DataRoot is where images and containers live (default Dir/data); put
	// it in a cache to keep a built node image between daemons.
	DataRoot string
	// Bridge is docker0's address and range (default DefaultBridge).
	Bridge netip.Prefix
	// Pools is where user networks' /24s come from (default DefaultPools).
	Pools netip.Prefix
	// Shim is the path of the nvcf-runc shim; required only when NeedsShim.
	Shim string
	// Detach lets the daemon outlive this process (no parent-death
	// signal): Start saves the host's state in Dir, and Adopt, in a later
	// process, gets a Daemon whose Stop stops it and puts the host back.
	Detach bool `json:"-"`
}

// Daemon is a dockerd this process started.
type Daemon struct {
	cfg    Config
	pid    int
	done   chan error // the daemon's exit; nil for an adopted one
	before hostState

	stopOnce sync.Once
	stopErr  error
}

// Socket is the daemon's API socket.
func (d *Daemon) Socket() string { return filepath.Join(d.cfg.Dir, "docker.sock") }

// Host is the DOCKER_HOST value that reaches the daemon.
func (d *Daemon) Host() string { return "unix://" + d.Socket() }

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.pid }

// NeedsShim reports whether this process's capability bounding set lacks
// CAP_SYS_RESOURCE, which runc hands to privileged containers.
func NeedsShim() (bool, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			set, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return false, fmt.Errorf("parse CapBnd %q: %w", v, err)
			}
			return set&(1<<capSysResource) == 0, nil
		}
	}
	return false, errors.New("no CapBnd line in /proc/self/status")
}

// Answers reports whether a Docker daemon answers on the unix socket path.
func Answers(ctx context.Context, socket string) bool {
	c := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}, Timeout: 2 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Start runs dockerd as a child of this process and waits until it answers.
// It refuses when a docker0 link already exists (another daemon's).
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	if cfg.Dir == "" {
		return nil, errors.New("dockerd.Config.Dir is required")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("starting dockerd needs root")
	}
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		return nil, fmt.Errorf("dockerd not found in PATH (install Debian's docker.io: hack/deps.sh docker): %w", err)
	}
	if cfg.DataRoot == "" {
		cfg.DataRoot = filepath.Join(cfg.Dir, "data")
	}
	if !cfg.Bridge.IsValid() {
		cfg.Bridge = DefaultBridge
	}
	if !cfg.Pools.IsValid() {
		cfg.Pools = DefaultPools
	}
	if _, err := os.Stat("/sys/class/net/docker0"); err == nil {
		return nil, errors.New("a docker0 bridge exists already: another Docker daemon runs (or left it); use that daemon, or stop it")
	}
	for _, d := range []string{cfg.Dir, cfg.DataRoot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// An empty configuration file: the machine's /etc/docker/daemon.json
	// (if any) belongs to its own daemon.
	conf := filepath.Join(cfg.Dir, "daemon.json")
	if err := os.WriteFile(conf, []byte("{}\n"), 0o600); err != nil {
		return nil, err
	}
	args := []string{
		"--config-file", conf,
		"--host", "unix://" + filepath.Join(cfg.Dir, "docker.sock"),
		"--pidfile", filepath.Join(cfg.Dir, "docker.pid"),
		"--exec-root", filepath.Join(cfg.Dir, "exec"),
		"--data-root", cfg.DataRoot,
		"--bip", cfg.Bridge.String(),
		"--default-address-pool", "base=" + cfg.Pools.String() + ",size=24",
		"--storage-driver", "overlay2",
	}
	need, err := NeedsShim()
	if err != nil {
		return nil, err
	}
	if need {
		if cfg.Shim == "" {
			return nil, fmt.Errorf("this machine's capability bounding set lacks CAP_SYS_RESOURCE, so privileged containers need the %s shim: give its path (make build puts it in bin/)", ShimRuntime)
		}
		args = append(args, "--add-runtime", ShimRuntime+"="+cfg.Shim, "--default-runtime", ShimRuntime)
	}
	logf, err := os.OpenFile(filepath.Join(cfg.Dir, "dockerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	before, err := snapshot(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a Ctrl-C of the terminal reaches the
	// harness only; the parent-death signal takes it along with a killed
	// harness, unless it is to outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if cfg.Detach {
		cmd.SysProcAttr.Pdeathsig = 0
		if err := saveState(cfg, before); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dockerd: %w", err)
	}
	d := &Daemon{cfg: cfg, pid: cmd.Process.Pid, done: make(chan error, 1), before: before}
	go func() { d.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !Answers(ctx, d.Socket()) {
		select {
		case err := <-d.done:
			d.done <- err
			_ = d.restore(context.Background())
			return nil, fmt.Errorf("dockerd exited before answering (%v); see %s", err, logf.Name())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), d.Stop(context.Background()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(fmt.Errorf("dockerd did not answer on %s within a minute; see %s", d.Socket(), logf.Name()), d.Stop(context.Background()))
		}
	}
	return d, nil
}

// Stop terminates the daemon (SIGTERM, then SIGKILL after 30 s), waits for
// it, and puts the host back: docker0, Docker's iptables chains and rules,
// the FORWARD policy and global forwarding as they were before Start.
// Later calls return the first one's result.
func (d *Daemon) Stop(ctx context.Context) error {
	d.stopOnce.Do(func() {
		switch {
		case d.pid <= 0:
			// An adopted daemon that had exited already: only the host
			// is left to put back. (Never signal pid -1 or 0.)
		case d.done == nil:
			_ = syscall.Kill(d.pid, syscall.SIGTERM)
			d.stopErr = waitGone(d.pid)
		default:
			_ = syscall.Kill(d.pid, syscall.SIGTERM)
			select {
			case <-d.done:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(d.pid, syscall.SIGKILL)
				<-d.done
			}
		}
		d.stopErr = errors.Join(d.stopErr, d.restore(ctx))
		if d.stopErr == nil {
			_ = os.Remove(statePath(d.cfg.Dir))
		}
	})
	return d.stopErr
}

// waitGone waits for a process that is not our child to exit: SIGTERM has
// been sent, SIGKILL follows after 30 s.
func waitGone(pid int) error {
	deadline := time.Now().Add(30 * time.Second)
	killed := false
	for syscall.Kill(pid, 0) == nil {
		if !killed && time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed, deadline = true, time.Now().Add(10*time.Second)
		} else if killed && time.Now().After(deadline) {
			return fmt.Errorf("dockerd pid %d did not exit after SIGKILL", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// detached is what Start saves beside a detached daemon.
type detached struct {
	Config Config    `json:"config"`
	Before hostState `json:"before"`
}

func statePath(dir string) string { return filepath.Join(dir, "host-before.json") }

func saveState(cfg Config, before hostState) error {
	b, err := json.MarshalIndent(detached{Config: cfg, Before: before}, "", "  ")
	if err != nil {
		return err
	}
	// Atomic: a torn record would leave the host changes with no way back.
	return atomicfile.Write(statePath(cfg.Dir), b, 0o600)
}

// Adopt returns the detached daemon that Start left running in dir, for
// Stop; ErrNotFound (wrapped) when dir holds none. A daemon that died
// meanwhile is adopted too: its Stop only puts the host back.
func Adopt(dir string) (*Daemon, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no detached Docker daemon in %s: %w", dir, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var st detached
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(dir), err)
	}
	d := &Daemon{cfg: st.Config, before: st.Before, pid: -1}
	if p, err := os.ReadFile(filepath.Join(dir, "docker.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(p))); err == nil && pid > 0 && isDockerd(pid) {
			d.pid = pid
		}
	}
	return d, nil
}

// ErrNotFound is wrapped by Adopt when there is no daemon to adopt.
var ErrNotFound = errors.New("no detached daemon")

// isDockerd reports whether pid runs dockerd (a reused pid does not).
func isDockerd(pid int) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && filepath.Base(exe) == "dockerd"
}
