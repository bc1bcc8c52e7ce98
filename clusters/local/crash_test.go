package local_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/binaries"
	"github.com/nvcf/conformance/clusters/local/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
)

// The crash-point test: `harness up` and `harness down` are killed with
// SIGKILL (the CLI, the agent, or both) after a random delay, then the next
// command must recover, and the `down` that ends every iteration must leave
// no process carrying the harness's marker, no pod namespace, bridge,
// nftables table, lo address or listening port of the environment.
//
// It needs root and the control-plane binaries; `go test` runs
// crashDefault (12: each kill point twice, about 90 s) iterations, `make crashtest` the long form
// (NVCF_CRASHTEST_ITERATIONS=50). NVCF_CRASHTEST_SEED repeats a run.

const (
	crashEnv      = "crash"
	crashCluster  = "crash-a"
	crashDefault  = 12
	crashTopology = `name: crash
domain: nvcf.test
clusters:
  - name: crash-a
    role: workers
`
)

// A kill point: which command, which process(es), and the delay range.
type killPoint struct {
	cmd      string // up or down
	target   string // cli, agent or both
	maxDelay time.Duration
}

var killPoints = []killPoint{
	// A one-cluster up takes about 4 s and a down under 1 s here.
	{"up", "cli", 4500 * time.Millisecond}, {"up", "agent", 4500 * time.Millisecond}, {"up", "both", 4500 * time.Millisecond},
	{"down", "cli", 800 * time.Millisecond}, {"down", "agent", 800 * time.Millisecond}, {"down", "both", 800 * time.Millisecond},
}

func TestCrashPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("crash test: the embedded provider needs root; run `make crashtest` or `make test` as root")
	}
	if !binaries.Ready(binaries.Options{}) {
		t.Skip("crash test: the control-plane binaries are not in the cache; run `make binaries` first")
	}
	iterations := crashDefault
	if v := os.Getenv("NVCF_CRASHTEST_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "NVCF_CRASHTEST_ITERATIONS")
		iterations = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("NVCF_CRASHTEST_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "NVCF_CRASHTEST_SEED")
		seed = s
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("crash test: %d iterations, seed %d (NVCF_CRASHTEST_SEED)", iterations, seed)

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(iterations)*time.Minute+5*time.Minute)
	defer cancel()
	harnessBin, _ := buildTools(ctx, t)
	h := &crashHarness{t: t, bin: harnessBin, stateHome: t.TempDir()}
	h.topology = filepath.Join(t.TempDir(), "crash.yaml")
	require.NoError(t, os.WriteFile(h.topology, []byte(crashTopology), 0o644))
	t.Cleanup(func() {
		_, _ = h.run(context.Background(), "down", "--name", crashEnv)
		h.killOurs() // whatever a failed assertion left
	})

	type result struct {
		point     killPoint
		delay     time.Duration
		killed    string
		orphans   int // marked processes without their agent right after the kill
		recovery  string
		took      time.Duration
		leftovers []string
	}
	var results []result
	for i := range iterations {
		kp := killPoints[i%len(killPoints)]
		delay := time.Duration(rng.Int64N(int64(kp.maxDelay)))
		r := result{point: kp, delay: delay}
		if kp.cmd == "down" {
			_, err := h.run(ctx, "up", "--topology", h.topology)
			require.NoError(t, err, "iteration %d: up before the down to kill", i)
		}
		r.killed = h.runAndKill(ctx, kp, delay)
		r.orphans = h.orphans()

		// Recovery: after a killed up, alternately the next up (then down)
		// or straight down; after a killed down, down.
		start := time.Now()
		if kp.cmd == "up" && i%2 == 0 {
			r.recovery = "up"
			out, err := h.run(ctx, "up", "--topology", h.topology)
			r.took = time.Since(start)
			require.NoError(t, err, "iteration %d (%s %s after %s): the next up failed:\n%s", i, kp.cmd, kp.target, delay, out)
			out, err = h.run(ctx, "down", "--name", crashEnv)
			require.NoError(t, err, "iteration %d: down after the recovering up:\n%s", i, out)
		} else {
			r.recovery = "down"
			out, err := h.run(ctx, "down", "--name", crashEnv)
			r.took = time.Since(start)
			require.NoError(t, err, "iteration %d (%s %s after %s): the next down failed:\n%s", i, kp.cmd, kp.target, delay, out)
		}
		r.leftovers = h.leftovers()
		results = append(results, r)
		t.Logf("CRASH %2d: kill %-5s of %-4s after %-6s (%s) orphans=%d; next %-4s took %-6s; leftovers after down: %d %v",
			i, kp.target, kp.cmd, delay.Round(time.Millisecond), r.killed, r.orphans, r.recovery, r.took.Round(10*time.Millisecond), len(r.leftovers), r.leftovers)
		require.Empty(t, r.leftovers, "iteration %d: leftovers after down", i)
	}

	// Summary per kill point.
	var sum strings.Builder
	fmt.Fprintf(&sum, "crash test summary: %d iterations, seed %d\n", len(results), seed)
	fmt.Fprintf(&sum, "%-12s %5s %8s %14s %14s %10s\n", "kill point", "runs", "orphans", "next up (max)", "next down (max)", "leftovers")
	for _, kp := range killPoints {
		var runs, orphans, left int
		var upMax, downMax time.Duration
		for _, r := range results {
			if r.point != kp {
				continue
			}
			runs++
			orphans += r.orphans
			left += len(r.leftovers)
			if r.recovery == "up" {
				upMax = max(upMax, r.took)
			} else {
				downMax = max(downMax, r.took)
			}
		}
		fmt.Fprintf(&sum, "%-12s %5d %8d %14s %14s %10d\n", kp.cmd+"/"+kp.target, runs, orphans,
			upMax.Round(10*time.Millisecond), downMax.Round(10*time.Millisecond), left)
	}
	t.Log(sum.String())
	if path := os.Getenv("NVCF_CRASHTEST_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(sum.String()), 0o644))
	}
}

type crashHarness struct {
	t                        *testing.T
	bin, stateHome, topology string
}

func (h *crashHarness) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+h.stateHome,
		"XDG_CACHE_HOME="+filepath.Dir(clusters.CacheHome()))
	return cmd
}

func (h *crashHarness) run(ctx context.Context, args ...string) (string, error) {
	out, err := h.command(ctx, args...).CombinedOutput()
	return string(out), err
}

// envDir is the environment's state folder: the value of its marker.
func (h *crashHarness) envDir() string { return filepath.Join(h.stateHome, "nvcf-harness", crashEnv) }

// ours are the processes carrying this test's environment's marker.
func (h *crashHarness) ours() []proc.Marked {
	ms, err := proc.Scan()
	require.NoError(h.t, err)
	var out []proc.Marked
	for _, m := range ms {
		if m.Env == h.envDir() {
			out = append(out, m)
		}
	}
	return out
}

func (h *crashHarness) agentPID() int {
	for _, m := range h.ours() {
		if n := len(m.Argv); n >= 2 && m.Argv[n-2] == "--state" {
			return m.PID
		}
	}
	return 0
}

// runAndKill starts `harness <kp.cmd>`, waits delay, SIGKILLs the target(s)
// and says what it killed.
func (h *crashHarness) runAndKill(ctx context.Context, kp killPoint, delay time.Duration) string {
	args := []string{"down", "--name", crashEnv}
	if kp.cmd == "up" {
		args = []string{"up", "--topology", h.topology}
	}
	var out bytes.Buffer
	cmd := h.command(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(h.t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-time.After(delay):
	case <-exited:
	}
	var killed []string
	agent := h.agentPID()
	if kp.target == "agent" || kp.target == "both" {
		if agent > 0 {
			if _, err := proc.KillMarked(ctx, agent, h.envDir(), 0); err == nil {
				killed = append(killed, "agent")
			}
		}
	}
	if kp.target == "cli" || kp.target == "both" {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			killed = append(killed, "cli")
		}
	}
	<-exited
	if len(killed) == 0 {
		return "nothing left to kill"
	}
	return strings.Join(killed, "+")
}

// orphans counts marked processes of the environment with no agent.
func (h *crashHarness) orphans() int {
	if h.agentPID() > 0 {
		return 0
	}
	time.Sleep(200 * time.Millisecond) // the parent-death signal is asynchronous
	return len(h.ours())
}

// leftovers lists what of the environment is still there.
func (h *crashHarness) leftovers() []string {
	var left []string
	for _, m := range h.ours() {
		left = append(left, fmt.Sprintf("process %d %v", m.PID, m.Argv))
	}
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "nvcf-"+crashCluster+"-") {
				left = append(left, "netns "+e.Name())
			}
		}
	}
	if links, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, l := range links {
			// Bridge 0 is this environment's (its one cluster has no pods,
			// so it has no veths of its own).
			if l.Name() == podnet.BridgeName(0) {
				left = append(left, "link "+l.Name())
			}
		}
	}
	// The nftables tables are shared by every bridge of ours on the
	// machine (other packages' root tests make nvcfbr86…89 and their veths
	// while `make test` runs); they and any nvcfv* veth count as left over
	// only when no such bridge exists.
	if matches, _ := filepath.Glob("/sys/class/net/nvcfbr*"); len(matches) == 0 {
		veths, _ := filepath.Glob("/sys/class/net/nvcfv*")
		for _, v := range veths {
			left = append(left, "link "+filepath.Base(v))
		}
		for _, table := range []string{podnet.HarnessTable, podnet.FaultsTable} {
			if err := exec.Command("nft", "list", "table", "inet", table).Run(); err == nil {
				left = append(left, "nft table inet "+table)
			}
		}
	}
	if out, err := exec.Command("ip", "-4", "-o", "addr", "show", "dev", "lo").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "198.19.10.") || strings.HasPrefix(f, "198.19.100.") {
				left = append(left, "lo address "+f)
			}
		}
	}
	for _, port := range []int{6443, 12379, 12479, 10250} {
		if listening(port) {
			left = append(left, fmt.Sprintf("listening port %d", port))
		}
	}
	return left
}

// listening reports whether anything listens on TCP port (IPv4 or IPv6).
func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) > 3 && strings.HasSuffix(fs[1], want) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// killOurs SIGKILLs whatever of this test's environment still runs.
func (h *crashHarness) killOurs() {
	for _, m := range h.ours() {
		_, _ = proc.KillMarked(context.Background(), m.PID, h.envDir(), 0)
	}
}
