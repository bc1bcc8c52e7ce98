package local_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/clusters/local/internal/proc"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// The end-to-end test of the embedded provider: two real clusters on this
// machine, a Deployment and a StatefulSet behind headless Services, and
// what Kubernetes, CoreDNS and the load balancers make of them. It needs
// root (network namespaces, bridges, nftables) and the Go toolchain (it
// builds the control-plane binaries into the cache when they are missing:
// about 15 minutes cold on 2 cores, seconds when cached).

const (
	envName  = "e2e-provider"
	ns       = "e2e"
	stsName  = "echo-sts"
	depName  = "echo-deploy"
	lbHost   = "echo.e2e-a.nvcf.test"
	dialEnv  = "NVCF_E2E_DIAL_URL"
	echoPort = 8001
)

func TestE2EProviderTwoClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("e2e: the embedded provider needs root (network namespaces, bridges, nftables); run `make test` as root or `sudo go test ./clusters/local/`")
	}
	hostlock.Shared(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("e2e: the go tool is not on PATH; it builds the control-plane binaries")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	progress := testWriter{t}

	start := time.Now()
	_, err := binaries.Ensure(ctx, binaries.Options{Progress: progress})
	require.NoError(t, err)
	t.Logf("binaries ready in %s", time.Since(start).Round(time.Second))
	harnessBin, refBin := buildTools(ctx, t)

	p := local.New(local.Options{AgentCommand: []string{harnessBin, "agent"}, Images: map[string]string{"nvcf-ref": refBin}})
	spec := clusters.Spec{Name: envName, Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "e2e-a", Nodes: 1}, {Name: "e2e-b", Nodes: 2}}}
	t.Cleanup(func() {
		require.NoError(t, p.Down(context.Background(), envName))
		// Only this environment's bridges: other packages' root tests make
		// their own (nvcfbr86…) and may run at the same time.
		for i := range spec.Clusters {
			_, err := os.Stat(filepath.Join("/sys/class/net", podnet.BridgeName(i)))
			require.True(t, os.IsNotExist(err), "bridge %s left after down", podnet.BridgeName(i))
		}
	})

	env := upWhenFree(ctx, t, p, spec, progress)
	t.Run("second up reuses", func(t *testing.T) {
		start := time.Now()
		again, err := p.Up(ctx, spec)
		require.NoError(t, err)
		require.Equal(t, env.Kubeconfig, again.Kubeconfig)
		t.Logf("BENCH reuse: %s", time.Since(start).Round(time.Millisecond))
		changed := spec
		changed.Clusters = []clusters.ClusterSpec{{Name: "e2e-a", Nodes: 1}, {Name: "e2e-b", Nodes: 3}}
		_, err = p.Up(ctx, changed)
		require.ErrorIs(t, err, local.ErrChanged)
		require.Contains(t, err.Error(), `cluster "e2e-b" nodes 2 → 3`)
	})

	t.Run("kubectl get pods -A", func(t *testing.T) {
		for _, c := range env.Clusters {
			out, err := exec.CommandContext(ctx, kubectl(t), "--kubeconfig", env.Kubeconfig, "--context", c.Context, "get", "pods", "-A").CombinedOutput()
			require.NoError(t, err, "%s", out)
			out, err = exec.CommandContext(ctx, kubectl(t), "--kubeconfig", env.Kubeconfig, "--context", c.Context, "get", "nodes").CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), c.Nodes[0])
		}
	})

	a := newCluster(t, env, "e2e-a")
	b := newCluster(t, env, "e2e-b")
	a.apply(ctx, t)
	b.apply(ctx, t)
	stsPods := a.waitPods(ctx, t, "app="+stsName, 3)
	depPods := a.waitPods(ctx, t, "app="+depName, 3)

	t.Run("pods Running and Ready with distinct IPs in the pod range", func(t *testing.T) {
		seen := map[string]string{}
		for _, pod := range append(stsPods, depPods...) {
			ip, err := netip.ParseAddr(pod.Status.PodIP)
			require.NoError(t, err, "pod %s IP", pod.Name)
			require.True(t, netip.MustParsePrefix("198.18.10.0/24").Contains(ip), "pod %s IP %s", pod.Name, ip)
			require.Empty(t, seen[ip.String()], "pods %s and %s share %s", seen[ip.String()], pod.Name, ip)
			seen[ip.String()] = pod.Name
		}
	})

	t.Run("EndpointSlices: hostname for StatefulSet pods only, targetRef on both", func(t *testing.T) {
		a.checkSlices(ctx, t, stsName, true)
		a.checkSlices(ctx, t, depName, false)
	})

	t.Run("CoreDNS SRV: pod hostnames for the StatefulSet, dashed IPs for the Deployment", func(t *testing.T) {
		a.checkSRV(ctx, t, stsName, func(target string) bool {
			return strings.HasPrefix(target, stsName+"-") && strings.HasSuffix(target, "."+stsName+"."+ns+".svc.cluster.local.")
		})
		a.checkSRV(ctx, t, depName, func(target string) bool {
			label, rest, _ := strings.Cut(target, ".")
			ip, err := netip.ParseAddr(strings.ReplaceAll(label, "-", "."))
			return err == nil && ip.Is4() && rest == depName+"."+ns+".svc.cluster.local."
		})
	})

	t.Run("deleted pods are replaced", func(t *testing.T) {
		a.replaceStatefulSetPod(ctx, t, stsName+"-1")
		a.replaceDeploymentPod(ctx, t, depPods[0].Name)
	})

	t.Run("load balancer reachable from the other cluster's pod by its external hostname", func(t *testing.T) {
		addr := a.waitLB(ctx, t)
		require.True(t, netip.MustParsePrefix("198.19.100.0/24").Contains(addr), "LB address %s", addr)
		st, err := p.Status(ctx, envName)
		require.NoError(t, err)
		require.NoError(t, p.(clusters.Prober).Probe(ctx, envName), "a running environment probes alive")
		ci, _ := st.Cluster("e2e-a")
		require.NotEmpty(t, ci.LoadBalancers)
		require.Contains(t, ci.LoadBalancers[0].Hostnames, lbHost)
		client := b.waitPods(ctx, t, "app="+depName, 3)[0]
		netns := podNetns(t, st, "e2e-b", string(client.UID))
		url := fmt.Sprintf("http://%s:%d/v1/models", lbHost, echoPort)
		self, err := os.Executable()
		require.NoError(t, err)
		eventually(ctx, t, time.Minute, func() error {
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", netns, self, "-test.run=^TestHelperDial$")
			cmd.Env = append(os.Environ(), dialEnv+"="+url)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "dial ok") {
				return fmt.Errorf("from netns %s: %v: %s", netns, err, out)
			}
			return nil
		})
	})

	testAPISecurity(ctx, t, env)

	t.Run("a killed control-plane process is restarted", func(t *testing.T) {
		dir := filepath.Join(clusters.StateHome(), envName)
		pidOf := func() (state.Process, error) {
			st, err := state.Load(dir)
			if err != nil {
				return state.Process{}, err
			}
			for _, ps := range st.Processes {
				if ps.Name == "e2e-a/kube-scheduler" {
					return ps, nil
				}
			}
			return state.Process{}, errors.New("no e2e-a/kube-scheduler in the state file")
		}
		old, err := pidOf()
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(old.PID, syscall.SIGKILL))
		eventually(ctx, t, time.Minute, func() error {
			now, err := pidOf()
			if err != nil {
				return err
			}
			if now.PID == old.PID || !proc.Ours(now.PID, now.Marker) {
				return fmt.Errorf("scheduler not restarted yet (pid %d, was %d)", now.PID, old.PID)
			}
			return nil
		})
		// The restarted scheduler places the replacement of a deleted pod.
		a.replaceDeploymentPod(ctx, t, a.waitPods(ctx, t, "app="+depName, 3)[0].Name)
	})

	t.Run("resident memory per cluster at idle", func(t *testing.T) {
		for _, c := range env.Clusters {
			t.Logf("BENCH RSS of cluster %s control plane + CoreDNS: %d MiB", c.Name, clusterRSS(t, envName, c.Name)>>20)
		}
	})

	t.Run("the next command cleans up after a killed agent", func(t *testing.T) {
		dir := filepath.Join(clusters.StateHome(), envName)
		st, err := state.Load(dir)
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(st.AgentPID, syscall.SIGKILL))
		eventually(ctx, t, 10*time.Second, func() error {
			if proc.Ours(st.AgentPID, st.Marker) {
				return fmt.Errorf("agent %d still running", st.AgentPID)
			}
			return nil
		})
		_, err = p.Status(ctx, envName)
		require.ErrorIs(t, err, clusters.ErrNotFound)
		require.ErrorIs(t, p.(clusters.Prober).Probe(ctx, envName), clusters.ErrNotFound, "the probe sees the agent gone")
		require.NoError(t, p.Down(ctx, envName))
		for _, ps := range st.Processes {
			require.False(t, proc.Ours(ps.PID, ps.Marker), "%s (pid %d) survived", ps.Name, ps.PID)
		}
		ents, _ := os.ReadDir("/run/netns")
		for _, e := range ents {
			require.False(t, strings.HasPrefix(e.Name(), "nvcf-e2e-"), "namespace %s survived", e.Name())
		}
		_, err = os.Stat(state.File(dir))
		require.ErrorIs(t, err, os.ErrNotExist)
		_, err = os.Stat(filepath.Join(dir, "logs", "agent.log"))
		require.NoError(t, err, "logs are kept")
	})
}

// upWhenFree brings spec up, waiting while another environment (another
// test package's, under `go test ./...`) holds the machine's address plan.
func upWhenFree(ctx context.Context, t *testing.T, p clusters.Provider, spec clusters.Spec, progress testWriter) *clusters.Environment {
	waitUntil := time.Now().Add(20 * time.Minute)
	for {
		start := time.Now()
		env, err := p.Up(ctx, spec, clusters.WithProgress(progress))
		if err == nil {
			t.Logf("BENCH bring-up of two clusters (1+2 nodes): %s", time.Since(start).Round(10*time.Millisecond))
			return env
		}
		if !errors.Is(err, local.ErrOtherRunning) || time.Now().After(waitUntil) {
			require.NoError(t, err)
		}
		t.Logf("waiting: %v", err)
		select {
		case <-ctx.Done():
			require.NoError(t, ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
}

// TestHelperDial is not a test: the e2e test runs this binary inside a pod's
// network namespace with dialEnv set, to fetch a URL the way a pod would
// (resolv.conf of the namespace, its routes).
func TestHelperDial(t *testing.T) {
	url := os.Getenv(dialEnv)
	if url == "" {
		t.Skip("helper process for the e2e test; runs only inside a pod namespace")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	fmt.Println("dial ok")
}

// kubectl is the kubectl built into the cache, or Debian's.
func kubectl(t *testing.T) string {
	if p := binaries.KubectlPath(binaries.Options{}); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("kubectl")
	require.NoError(t, err, "no kubectl in the cache or on PATH")
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// buildTools builds the harness (agent and container wrapper) and nvcf-ref
// into a temporary folder.
func buildTools(ctx context.Context, t *testing.T) (harness, ref string) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, pkg := range []string{"harness", "nvcf-ref"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, pkg), "./cmd/"+pkg)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build ./cmd/%s: %s", pkg, out)
	}
	return filepath.Join(dir, "harness"), filepath.Join(dir, "nvcf-ref")
}

// eventually retries fn until it succeeds or the deadline passes, failing
// with fn's last error.
func eventually(ctx context.Context, t *testing.T, within time.Duration, fn func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		err := fn()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			require.NoError(t, err, "still failing after %s", within)
			return
		case <-tick.C:
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// podNetns is the network namespace of the pod with uid in cluster of env,
// by the cluster's index in the address plan (its bridge's number).
func podNetns(t *testing.T, env *clusters.Environment, cluster, uid string) string {
	t.Helper()
	ci, ok := env.Cluster(cluster)
	require.True(t, ok, "cluster %s", cluster)
	i, err := strconv.Atoi(strings.TrimPrefix(ci.Network.Bridge, "nvcfbr"))
	require.NoError(t, err, "bridge %q of %s", ci.Network.Bridge, cluster)
	return podnet.NetnsName(i, cluster, uid)
}
