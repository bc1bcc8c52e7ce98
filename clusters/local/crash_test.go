package local_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/faults"
)

// The crash-point test: `harness up`, `harness run` (during a cell deploy
// and during a fault), `harness fault inject` and `harness down` are killed
// with SIGKILL (the CLI, the agent, or both) at a random point, then the
// next command must recover, and the `down` that ends every iteration must
// leave no process carrying the harness's marker or run from the test's
// bin folder (CLI, suite, fault proxies), no journaled fault, no pod
// namespace, mount, bridge, nftables table, lo address or listening port
// of the environment.
//
// It needs root and the control-plane binaries; `go test` runs the bounded
// form, crashBounded's nine kill points once each (the six of up and down,
// one of each kind of run and fault inject: about two minutes, the three
// of run and fault inject 80 s of it, to keep `make test` short), `make crashtest` the long form
// (NVCF_CRASHTEST_ITERATIONS=60: each of the 15 points four times).
// Knobs: NVCF_CRASHTEST_SEED repeats a run; NVCF_CRASHTEST_POINTS (comma
// separated names or prefixes, "run/fault" or "fault/agent") keeps some
// kill points only; NVCF_CRASHTEST_OFFSET starts at that iteration, so the
// long form can run in chunks (OFFSET=20 ITERATIONS=10 are its iterations
// 20 to 29, with the same kill points and recoveries).

const (
	// crashBounded are the kill points of the bounded form, in an order
	// that gives the run's a recovery by `up` and by `down`, and the fault
	// inject's (both killed) the refusal and `up` before injecting again.
	crashBounded = "up,down,run/deploy/cli,run/fault/agent,fault/both"
	// up, down and fault inject use a one-cluster environment; run the
	// default topology's layout, which the scenarios need.
	crashTopology = `name: crash
domain: nvcf.test
clusters:
  - name: crash-a
    role: workers
`
	crashRunTopology = `name: crashrun
domain: nvcf.test
clusters:
  - name: crun-a
    role: stargate
    stargate:
      replicas: 3
      remoteWatch: [crun-b]
  - name: crun-b
    role: stargate
    stargate:
      replicas: 3
  - name: crun-w
    role: workers
`
)

// crashEnv is one environment the test kills commands of.
type crashEnv struct {
	name, topology string
	clusters       []string
}

// A kill point: which command, which process(es), and the delay range,
// counted from the command's start, or for run from the start of its
// phase (the suite starting: the first cell's deploy; a fault journaled).
type killPoint struct {
	cmd      string // up, down, run/deploy, run/fault or fault
	target   string // cli, agent or both
	maxDelay time.Duration
}

var killPoints = []killPoint{
	// A one-cluster up takes about 4 s and a down under 1 s here; a cell's
	// deploy about 15 s; fault inject injects within a second and holds the
	// fault for faultHold.
	{"up", "cli", 4500 * time.Millisecond}, {"up", "agent", 4500 * time.Millisecond}, {"up", "both", 4500 * time.Millisecond},
	{"down", "cli", 800 * time.Millisecond}, {"down", "agent", 800 * time.Millisecond}, {"down", "both", 800 * time.Millisecond},
	{"run/deploy", "cli", 15 * time.Second}, {"run/deploy", "agent", 15 * time.Second}, {"run/deploy", "both", 15 * time.Second},
	{"run/fault", "cli", 1500 * time.Millisecond}, {"run/fault", "agent", 1500 * time.Millisecond}, {"run/fault", "both", 1500 * time.Millisecond},
	{"fault", "cli", 3 * time.Second}, {"fault", "agent", 3 * time.Second}, {"fault", "both", 3 * time.Second},
}

// faultHold is how long the killed `fault inject` holds its fault.
const faultHold = 8 * time.Second

func (kp killPoint) isRun() bool { return strings.HasPrefix(kp.cmd, "run/") }

// firstFailure is the test, keeping its first failure's message: the
// summary, logged last, repeats it, so that a log cut to its tail (a CI
// page) still says why the test failed.
type firstFailure struct {
	*testing.T
	mu    sync.Mutex
	first string
}

func (f *firstFailure) note(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == "" {
		f.first = msg
	}
}

func (f *firstFailure) Errorf(format string, args ...any) {
	f.T.Helper()
	f.note(fmt.Sprintf(format, args...))
	f.T.Errorf(format, args...)
}

func (f *firstFailure) Fatalf(format string, args ...any) {
	f.T.Helper()
	f.note(fmt.Sprintf(format, args...))
	f.T.Fatalf(format, args...)
}

func (f *firstFailure) failure() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}

func TestCrashPoints(tt *testing.T) {
	t := &firstFailure{T: tt}
	if testing.Short() {
		t.Skip("crash test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("crash test: the embedded provider needs root; run `make crashtest` or `make test` as root")
	}
	hostlock.Shared(t)
	if !binaries.Ready(binaries.Options{}) {
		t.Skip("crash test: the control-plane binaries are not in the cache; run `make binaries` first")
	}
	spec, iterations := os.Getenv("NVCF_CRASHTEST_POINTS"), 0
	if v := os.Getenv("NVCF_CRASHTEST_ITERATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "NVCF_CRASHTEST_ITERATIONS")
		iterations = n
	} else if spec == "" {
		spec = crashBounded
	}
	points, err := selectPoints(spec)
	require.NoError(t, err)
	if iterations == 0 {
		iterations = len(points)
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("NVCF_CRASHTEST_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "NVCF_CRASHTEST_SEED")
		seed = s
	}
	offset := 0
	if v := os.Getenv("NVCF_CRASHTEST_OFFSET"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "NVCF_CRASHTEST_OFFSET")
		offset = n
	}
	rng := rand.New(rand.NewPCG(seed, uint64(offset)))
	t.Logf("crash test: %d iterations from %d, seed %d (NVCF_CRASHTEST_SEED), %d kill points", iterations, offset, seed, len(points))

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(iterations)*4*time.Minute+10*time.Minute)
	defer cancel()
	h := &crashHarness{t: t, binDir: buildBundle(ctx, t), stateHome: t.TempDir(), artifacts: t.TempDir()}
	h.bin = filepath.Join(h.binDir, "harness")
	small := h.env("crash", crashTopology, "crash-a")
	big := h.env("crashrun", crashRunTopology, "crun-a", "crun-b", "crun-w")
	t.Cleanup(func() {
		for _, e := range []*crashEnv{small, big} {
			_, _ = h.run(context.Background(), "down", "--name", e.name)
			h.killOurs(e) // whatever a failed assertion left
		}
	})

	var results []crashResult
	report := os.Getenv("NVCF_CRASHTEST_REPORT")
	// The summary is written also when an iteration fails, so that a
	// chunk of the long form leaves what it measured.
	defer func() {
		sum := summarize(results, seed)
		if f := t.failure(); f != "" {
			const keep = 4000
			if len(f) > keep {
				f = "…" + f[len(f)-keep:]
			}
			sum += "\nFAILED after iteration " + strconv.Itoa(len(results)-1) + ": " + f + "\n"
		}
		t.Log(sum)
		if report != "" {
			require.NoError(t, os.WriteFile(report, []byte(sum), 0o644))
		}
	}()
	for i := offset; i < offset+iterations; i++ {
		kp := points[i%len(points)]
		e := small
		if kp.isRun() {
			e = big
		}
		delay := time.Duration(rng.Int64N(int64(kp.maxDelay)))
		r := crashResult{iteration: i, point: kp, delay: delay}
		began := time.Now()
		if kp.cmd == "down" || kp.cmd == "fault" {
			out, err := h.run(ctx, "up", "--topology", e.topology)
			require.NoError(t, err, "iteration %d: up before the %s to kill:\n%s", i, kp.cmd, out)
		}
		r.killed = h.runAndKill(ctx, e, kp, delay)
		r.orphans = h.orphans(e)

		// Recovery, alternately: the command again (for up and run: up,
		// then down; for fault: a short fault inject, then down), or
		// straight down. A fault inject into an environment whose agent was
		// killed must undo the killed one's fault and refuse, saying what
		// to run; after that `up` it injects.
		start := time.Now()
		if kp.cmd != "down" && i%2 == 0 {
			args := []string{"up", "--topology", e.topology}
			r.recovery = "up"
			if kp.cmd == "fault" {
				args = h.faultArgs(e, time.Second)
				r.recovery = "fault"
				if strings.Contains(r.killed, "agent") {
					out, err := h.run(ctx, args...)
					require.Error(t, err, "iteration %d: fault inject into an environment whose agent was killed:\n%s", i, out)
					require.Contains(t, out, "its agent (pid ", "iteration %d: the refusal names the gone agent", i)
					require.Contains(t, out, "harness up", "iteration %d: the refusal says what to run", i)
					require.Empty(t, h.journaled(e), "iteration %d: the refused fault inject removes the killed one's fault", i)
					out, err = h.run(ctx, "up", "--topology", e.topology)
					require.NoError(t, err, "iteration %d: up after the refused fault inject:\n%s", i, out)
					r.recovery = "up+fault"
				}
			}
			out, err := h.run(ctx, args...)
			r.took = time.Since(start)
			if err != nil {
				out += "\n" + h.apiServers(e)
			}
			require.NoError(t, err, "iteration %d (%s %s after %s): the next %s failed:\n%s", i, kp.cmd, kp.target, delay, r.recovery, out)
			out, err = h.run(ctx, "down", "--name", e.name)
			require.NoError(t, err, "iteration %d: down after the recovering %s:\n%s", i, r.recovery, out)
		} else {
			r.recovery = "down"
			out, err := h.run(ctx, "down", "--name", e.name)
			r.took = time.Since(start)
			require.NoError(t, err, "iteration %d (%s %s after %s): the next down failed:\n%s", i, kp.cmd, kp.target, delay, out)
		}
		r.leftovers = h.leftovers(e)
		r.total = time.Since(began)
		results = append(results, r)
		t.Log(r)
		require.Empty(t, r.leftovers, "iteration %d: leftovers after down", i)
	}
}

// crashResult is one iteration of the crash test.
type crashResult struct {
	iteration int
	point     killPoint
	delay     time.Duration
	killed    string
	orphans   int // marked processes without their agent right after the kill
	recovery  string
	took      time.Duration
	leftovers []string
	total     time.Duration // the whole iteration, kill to clean
}

func (r crashResult) String() string {
	return fmt.Sprintf("CRASH %2d: kill %-5s of %-10s after %-6s (%s) orphans=%d; next %-5s took %-6s; leftovers after down: %d %v; iteration %s",
		r.iteration, r.point.target, r.point.cmd, r.delay.Round(time.Millisecond), r.killed, r.orphans, r.recovery,
		r.took.Round(10*time.Millisecond), len(r.leftovers), r.leftovers, r.total.Round(100*time.Millisecond))
}

// summarize is the report: every iteration, then per kill point the runs,
// the orphans, the next command's time (min/median/max, the same command
// again and down apart) and the leftovers.
func summarize(results []crashResult, seed uint64) string {
	var sum strings.Builder
	fmt.Fprintf(&sum, "crash test summary: %d iterations, seed %d\n", len(results), seed)
	for _, r := range results {
		fmt.Fprintln(&sum, r)
	}
	fmt.Fprintf(&sum, "%-16s %5s %8s %-26s %-26s %10s\n", "kill point", "runs", "orphans",
		"next again (min/med/max)", "next down (min/med/max)", "leftovers")
	var allAgain, allDown []time.Duration
	var allLeft int
	for _, kp := range killPoints {
		var runs, orphans, left int
		var again, down []time.Duration
		for _, r := range results {
			if r.point != kp {
				continue
			}
			runs++
			orphans += r.orphans
			left += len(r.leftovers)
			if r.recovery == "down" {
				down = append(down, r.took)
			} else {
				again = append(again, r.took)
			}
		}
		if runs == 0 {
			continue
		}
		allAgain, allDown, allLeft = append(allAgain, again...), append(allDown, down...), allLeft+left
		fmt.Fprintf(&sum, "%-16s %5d %8d %-26s %-26s %10d\n", kp.cmd+"/"+kp.target, runs, orphans,
			spread(again), spread(down), left)
	}
	fmt.Fprintf(&sum, "%-16s %5d %8s %-26s %-26s %10d\n", "all", len(results), "",
		spread(allAgain), spread(allDown), allLeft)
	return sum.String()
}

// spread is "min/median/max" of ds, "-" when there are none.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("%s/%s/%s", r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]))
}

// selectPoints is the kill points spec names: comma-separated names
// ("run/fault/agent") or prefixes of them ("run/fault", "up"); all of them
// when spec is empty.
func selectPoints(spec string) ([]killPoint, error) {
	if spec == "" {
		return killPoints, nil
	}
	var out []killPoint
	for _, want := range strings.Split(spec, ",") {
		want = strings.TrimSpace(want)
		n := len(out)
		for _, kp := range killPoints {
			if name := kp.cmd + "/" + kp.target; name == want || strings.HasPrefix(name, want+"/") {
				out = append(out, kp)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("NVCF_CRASHTEST_POINTS: %q names no kill point (names are command/target, e.g. run/fault/agent)", want)
		}
	}
	return out, nil
}

// buildBundle builds what `harness run` needs beside it (the CLI, the
// reference binary, the suite, test2json, gotestsum) into a temporary
// folder, as `make build` does into bin/.
func buildBundle(ctx context.Context, t testing.TB) string {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"build", "-o", dir + "/", "./cmd/harness", "./cmd/nvcf-ref"},
		{"test", "-c", "-o", filepath.Join(dir, "scenarios.test"), "./scenarios"},
		{"build", "-o", dir + "/", "cmd/test2json", "gotest.tools/gotestsum"},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %v: %s", args, out)
	}
	return dir
}

type crashHarness struct {
	t                                 *firstFailure
	bin, binDir, stateHome, artifacts string
}

func (h *crashHarness) env(name, topology string, clusters ...string) *crashEnv {
	path := filepath.Join(h.t.TempDir(), name+".yaml")
	require.NoError(h.t, os.WriteFile(path, []byte(topology), 0o644))
	return &crashEnv{name: name, topology: path, clusters: clusters}
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

// faultArgs injects latency on the path from e's cluster to a load-balancer
// address: a proxy in the injecting process and rules in the faults table.
func (h *crashHarness) faultArgs(e *crashEnv, hold time.Duration) []string {
	return []string{"fault", "inject", "--topology", e.topology, "--kind", "tcp",
		"--target", e.clusters[0] + "->198.19.100.1:443", "--param", "latency=100ms", "--duration", hold.String()}
}

// args is the command line of kp's command on e.
func (h *crashHarness) args(e *crashEnv, kp killPoint) []string {
	sel := "^tls/pylon-verified$"
	if kp.cmd == "run/fault" {
		sel = "^resilience/quic-loss-delay$"
	}
	switch kp.cmd {
	case "up":
		return []string{"up", "--topology", e.topology}
	case "down":
		return []string{"down", "--name", e.name}
	case "fault":
		return h.faultArgs(e, faultHold)
	}
	return []string{"run", "--topology", e.topology, "--run", sel, "--workload", "statefulset", "--trust", "bundle",
		"--artifacts", h.artifacts}
}

// envDir is e's state folder: the value of its marker.
func (h *crashHarness) envDir(e *crashEnv) string {
	return filepath.Join(h.stateHome, "nvcf-harness", e.name)
}

// ours are the processes carrying e's marker.
func (h *crashHarness) ours(e *crashEnv) []proc.Marked {
	ms, err := proc.Scan()
	require.NoError(h.t, err)
	var out []proc.Marked
	for _, m := range ms {
		if m.Env == h.envDir(e) {
			out = append(out, m)
		}
	}
	return out
}

func (h *crashHarness) agentPID(e *crashEnv) int {
	for _, m := range h.ours(e) {
		if n := len(m.Argv); n >= 2 && m.Argv[n-2] == "--state" {
			return m.PID
		}
	}
	return 0
}

// bundleProcs are the processes running an executable of the test's bin
// folder (CLIs, the suite and its runners); pod processes of nvcf-ref
// carry the marker and are counted there.
func (h *crashHarness) bundleProcs() []string {
	var out []string
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range exes {
		target, err := os.Readlink(exe)
		if err != nil || filepath.Dir(target) != h.binDir || filepath.Base(target) == "nvcf-ref" {
			continue
		}
		pid := filepath.Base(filepath.Dir(exe))
		if pid == strconv.Itoa(os.Getpid()) {
			continue
		}
		out = append(out, "process "+pid+" "+filepath.Base(target))
	}
	return out
}

// waitPhase waits until kp's phase begins on e, or the command exits.
func (h *crashHarness) waitPhase(ctx context.Context, e *crashEnv, kp killPoint, exited <-chan struct{}) bool {
	if !kp.isRun() {
		return true
	}
	for {
		switch kp.cmd {
		case "run/deploy":
			for _, p := range h.bundleProcs() {
				if strings.HasSuffix(p, " scenarios.test") {
					return true
				}
			}
		case "run/fault":
			if es, _ := faults.List(h.envDir(e)); len(es) > 0 {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runAndKill starts kp's command on e, waits for its phase and delay,
// SIGKILLs the target(s) and says what it killed.
func (h *crashHarness) runAndKill(ctx context.Context, e *crashEnv, kp killPoint, delay time.Duration) string {
	var out bytes.Buffer
	cmd := h.command(ctx, h.args(e, kp)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(h.t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if !h.waitPhase(ctx, e, kp, exited) {
		h.t.Fatalf("%s ended before the phase to kill it in:\n%s", kp.cmd, out.String())
	}
	select {
	case <-time.After(delay):
	case <-exited:
	}
	var killed []string
	agent := h.agentPID(e)
	if kp.target == "agent" || kp.target == "both" {
		if agent > 0 {
			if _, err := proc.KillMarked(ctx, agent, h.envDir(e), 0); err == nil {
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
	// With its agent gone a CLI ends by itself: up at once, run within
	// its environment watch and the suite's grace, fault inject when its
	// fault's time is up.
	select {
	case <-exited:
	case <-time.After(3 * time.Minute):
		h.t.Fatalf("%s still runs 3 minutes after its agent was killed:\n%s", kp.cmd, out.String())
	}
	if len(killed) == 0 {
		return "nothing left to kill"
	}
	return strings.Join(killed, "+")
}

// orphans counts the provider's marked processes of e with no agent (a
// run's suite carries the marker too, but its run stops it).
func (h *crashHarness) orphans(e *crashEnv) int {
	if h.agentPID(e) > 0 {
		return 0
	}
	time.Sleep(200 * time.Millisecond) // the parent-death signal is asynchronous
	n := 0
	for _, m := range h.ours(e) {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", m.PID)); err != nil || filepath.Dir(exe) != h.binDir || filepath.Base(exe) == "nvcf-ref" {
			n++
		}
	}
	return n
}

// journaled lists e's journaled faults.
func (h *crashHarness) journaled(e *crashEnv) []string {
	if _, err := os.Stat(h.envDir(e)); err != nil {
		return nil
	}
	es, err := faults.List(h.envDir(e))
	require.NoError(h.t, err)
	var out []string
	for _, f := range es {
		out = append(out, fmt.Sprintf("journaled fault %s of pid %d", f.ID, f.PID))
	}
	return out
}

// leftovers lists what of e is still there.
func (h *crashHarness) leftovers(e *crashEnv) []string {
	var left []string
	for _, m := range h.ours(e) {
		left = append(left, fmt.Sprintf("process %d %v", m.PID, m.Argv))
	}
	left = append(left, h.bundleProcs()...)
	left = append(left, h.journaled(e)...)
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, ent := range ents {
			for _, c := range e.clusters {
				if strings.HasPrefix(ent.Name(), "nvcf-") && strings.Contains(ent.Name(), "-"+c+"-") {
					left = append(left, "netns "+ent.Name())
				}
			}
		}
	}
	// A namespace's bind mount can outlive its /run/netns entry, and a pod's
	// volume mounts must never reach the host's mount namespace.
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			fs := strings.Fields(line)
			if len(fs) < 5 {
				continue
			}
			at := fs[4]
			ours := strings.HasPrefix(at, h.stateHome+"/")
			for _, c := range e.clusters {
				ours = ours || strings.HasPrefix(at, "/run/netns/nvcf-"+c+"-")
			}
			if ours {
				left = append(left, "mount "+at)
			}
		}
	}
	for i := range e.clusters {
		if _, err := os.Stat("/sys/class/net/" + podnet.BridgeName(i)); err == nil {
			left = append(left, "link "+podnet.BridgeName(i))
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
			for i := range e.clusters {
				if strings.HasPrefix(f, fmt.Sprintf("198.19.%d.", 10+i)) || strings.HasPrefix(f, fmt.Sprintf("198.19.%d.", 100+i)) {
					left = append(left, "lo address "+f)
				}
			}
		}
	}
	for i := range e.clusters {
		for _, port := range []int{6443 + i, 12379 + i, 12479 + i, 10250 + 10*i} {
			if listening(port) {
				left = append(left, fmt.Sprintf("listening port %d", port))
			}
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

// killOurs SIGKILLs whatever of e still runs.
func (h *crashHarness) killOurs(e *crashEnv) {
	for _, m := range h.ours(e) {
		_, _ = proc.KillMarked(context.Background(), m.PID, h.envDir(e), 0)
	}
}

// apiServers says, for a failure's message, who answers at each API server
// address e's kubeconfig names: the certificate presented (unverified) and
// the host's listeners on that port.
func (h *crashHarness) apiServers(e *crashEnv) string {
	var b strings.Builder
	cfg, err := clientcmd.LoadFromFile(filepath.Join(h.envDir(e), "kubeconfig"))
	if err != nil {
		return "kubeconfig: " + err.Error()
	}
	for name, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			fmt.Fprintf(&b, "%s: server %q: %v\n", name, c.Server, err)
			continue
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", u.Host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only to name who answers
		if err != nil {
			fmt.Fprintf(&b, "%s: %s: %v\n", name, u.Host, err)
		} else {
			leaf := conn.ConnectionState().PeerCertificates[0]
			fmt.Fprintf(&b, "%s: %s presents CN=%q issuer=%q DNS=%v IP=%v\n", name, u.Host, leaf.Subject.CommonName, leaf.Issuer.CommonName, leaf.DNSNames, leaf.IPAddresses)
			_ = conn.Close()
		}
		ss, _ := exec.Command("ss", "-ltnpH", "sport = :"+u.Port()).CombinedOutput()
		fmt.Fprintf(&b, "  listeners on :%s: %s\n", u.Port(), strings.TrimSpace(string(ss)))
	}
	return b.String()
}
