package binaries

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCoreDNSMainListsEveryPluginInOrder(t *testing.T) {
	m := corednsMain()
	require.Contains(t, m, `"github.com/coredns/coredns/plugin/metrics"`, "the prometheus directive lives in plugin/metrics")
	require.Contains(t, m, `dnsserver.Directives = []string{"reload", "bind", "ready", "health", "prometheus", "errors", "cache", "template", "loadbalance", "kubernetes", "forward", "loop"}`)
}

// TestCoreDNSSourceBuildServesBothCorefiles builds the minimal CoreDNS (a
// minute or more: set NVCF_BUILD_TESTS=1) and starts it with the
// embedded clusters' Corefile plugins and with kubeadm's, which fail at
// start-up when a directive is not linked.
func TestCoreDNSSourceBuildServesBothCorefiles(t *testing.T) {
	if os.Getenv("NVCF_BUILD_TESTS") == "" {
		t.Skip("builds CoreDNS from source; set NVCF_BUILD_TESTS=1")
	}
	dir := t.TempDir()
	o := Options{Versions: Pinned}
	o.defaults()
	c := component{dir: dir, bins: []string{filepath.Join(dir, "bin", "coredns")}, module: "github.com/coredns/coredns", version: Pinned.CoreDNS}
	require.NoError(t, buildCoreDNS(context.Background(), o, c))
	out, err := exec.Command(c.bins[0], "-plugins").CombinedOutput()
	require.NoError(t, err, "%s", out)
	linked := strings.Fields(string(out))
	for _, p := range corednsPlugins {
		require.Contains(t, linked, p)
	}
	for name, corefile := range map[string]string{
		"embedded": ".:0 {\n bind 127.0.0.1\n errors\n template ANY ANY {\n  rcode NXDOMAIN\n }\n cache 5\n forward . 127.0.0.1:9\n}\n",
		"kubeadm": ".:0 {\n bind 127.0.0.1\n errors\n health {\n  lameduck 1s\n }\n ready 127.0.0.1:0\n prometheus 127.0.0.1:0\n" +
			" forward . 127.0.0.1:9\n cache 30\n loop\n reload\n loadbalance\n}\n",
	} {
		path := filepath.Join(dir, name+".Corefile")
		require.NoError(t, os.WriteFile(path, []byte(corefile), 0o644))
		// A start that prints the version banner has parsed and set up
		// every directive; an unknown one exits first with its name.
		cmd := exec.Command(c.bins[0], "-conf", path)
		pipe, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = cmd.Stdout
		require.NoError(t, cmd.Start())
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		var seen []string
		started := false
		timeout := time.After(20 * time.Second)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				seen = append(seen, l)
				if strings.HasPrefix(l, "CoreDNS-") {
					started = true
					break read
				}
			case <-timeout:
				break read
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		require.True(t, started, "%s Corefile: %s", name, strings.Join(seen, "\n"))
	}
}
