package podnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/dockerd"
)

// hostNetState is what a Docker daemon changes and must be put back.
func hostNetState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	// Sorted, and without iptables-nft's own tables: listing with iptables
	// makes them (their rules and policies are compared below).
	out, _ := exec.Command("nft", "list", "tables").CombinedOutput()
	var tables []string
	for _, t := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if t != "table ip filter" && t != "table ip nat" {
			tables = append(tables, t)
		}
	}
	sort.Strings(tables)
	fmt.Fprintf(&b, "nft tables:\n%s\n", strings.Join(tables, "\n"))
	for _, table := range []string{"filter", "nat"} {
		out, _ := exec.Command("iptables", "-w", "-t", table, "-S").CombinedOutput()
		fmt.Fprintf(&b, "iptables %s:\n%s", table, out)
	}
	links, _ := os.ReadDir("/sys/class/net")
	for _, l := range links {
		fmt.Fprintf(&b, "link %s\n", l.Name())
	}
	fwd, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	fmt.Fprintf(&b, "ip_forward %s", fwd)
	return b.String()
}

// The embedded provider's pods reach each other, on one bridge and across
// clusters, while a Docker daemon runs: one cluster set up before the
// daemon started (Docker keeps our DOCKER-USER rule), one after. Stopping
// the daemon puts the host back as it was.
func TestPodsTalkWhileDockerRuns(t *testing.T) {
	requireRoot(t)
	// It starts a Docker daemon: no other environment or bridge beside it.
	hostlock.Exclusive(t)
	if _, err := exec.LookPath("dockerd"); err != nil {
		t.Skip("skipping: dockerd is not installed (hack/deps.sh docker installs Debian's docker.io)")
	}
	if _, err := os.Stat("/sys/class/net/docker0"); err == nil {
		t.Skip("skipping: another Docker daemon runs here; this test starts its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := hostNetState(t)
	// Another environment's bridges keep our rule in place after ours go.
	others := anyBridgeLeft()

	dir := t.TempDir()
	suffix := fmt.Sprint(os.Getpid() % 100000)
	a, err := SetupCluster(ctx, ClusterConfig{Index: 85, Name: "dk" + suffix + "a", StateDir: dir})
	require.NoError(t, err)
	closeA := func() { require.NoError(t, a.Close(context.Background())) }
	defer func() {
		if a != nil {
			closeA()
		}
	}()

	shim := filepath.Join(dir, "nvcf-runc")
	out, err := exec.Command("go", "build", "-o", shim, "github.com/nvcf/conformance/cmd/nvcf-runc").CombinedOutput()
	require.NoError(t, err, "build the shim: %s", out)
	start := time.Now()
	d, err := dockerd.Start(ctx, dockerd.Config{Dir: filepath.Join(dir, "docker"), Shim: shim})
	require.NoError(t, err)
	t.Logf("dockerd (pid %d) answered in %s", d.Pid(), time.Since(start))
	stopped := false
	defer func() {
		if !stopped {
			require.NoError(t, d.Stop(context.Background()))
		}
	}()
	policy, err := exec.Command("iptables", "-w", "-S", "FORWARD").Output()
	require.NoError(t, err)
	require.Contains(t, string(policy), "-P FORWARD DROP", "Docker set the policy this test is about")
	require.Contains(t, string(policy), "-j DOCKER-USER")

	b, err := SetupCluster(ctx, ClusterConfig{Index: 86, Name: "dk" + suffix + "b", StateDir: dir})
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close(context.Background())) }()
	user, err := exec.Command("iptables", "-w", "-S", DockerUserChain).Output()
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(user), forwardComment), "one rule, however many clusters:\n%s", user)
	require.Less(t, strings.Index(string(user), forwardComment), strings.Index(string(user), "-j RETURN"), "ours comes before Docker's RETURN:\n%s", user)

	p1, err := a.AddPod(ctx, PodSpec{UID: "d1111111-aaaa"})
	require.NoError(t, err)
	p2, err := a.AddPod(ctx, PodSpec{UID: "d2222222-bbbb"})
	require.NoError(t, err)
	p3, err := b.AddPod(ctx, PodSpec{UID: "d3333333-cccc"})
	require.NoError(t, err)
	srv2 := echoServer(t, p2.NetNS, p2.IP)
	srv3 := echoServer(t, p3.NetNS, p3.IP)
	// Without our rule Docker's policy drops pod traffic, even on one
	// bridge: the failure this test guards against.
	require.NoError(t, removeForward(ctx))
	inNetns(t, p1.NetNS, func() {
		c, err := net.DialTimeout("tcp", srv2.String(), time.Second)
		if err == nil {
			c.Close()
		}
		require.Error(t, err, "Docker's FORWARD policy drops pod traffic without the rule")
	})
	require.NoError(t, allowForward(ctx))
	for _, target := range []netip.AddrPort{srv2, srv3} {
		inNetns(t, p1.NetNS, func() {
			c, err := net.DialTimeout("tcp", target.String(), 3*time.Second)
			require.NoError(t, err, "pod %s → %s with Docker running", p1.IP, target)
			require.NoError(t, roundTrip(c))
		})
	}

	// Our rule leaves with the last bridge; Docker's chain stays.
	require.NoError(t, b.Close(ctx))
	closeA()
	a = nil
	user, err = exec.Command("iptables", "-w", "-S", DockerUserChain).Output()
	require.NoError(t, err, "Docker's chain stays")
	if others {
		require.Contains(t, string(user), forwardComment, "another environment's bridges still need it")
	} else {
		require.NotContains(t, string(user), forwardComment)
	}

	stopped = true
	require.NoError(t, d.Stop(ctx))
	if others && !strings.Contains(before, forwardComment) {
		// Without a Docker daemon the rule decides nothing; put the host
		// back as the other environment had it.
		require.NoError(t, removeForward(ctx))
	}
	require.Equal(t, before, hostNetState(t), "the host is as before the daemon started")
}
