package local_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// connectEnv makes the test binary a helper (TestHelperConnect) that dials
// each listed address from inside a network namespace.
const connectEnv = "NVCF_E2E_CONNECT"

// probeIndex is a cluster index of the address plan no topology of these
// tests uses (the other root tests take 86–88): its bridge is a network
// that is neither the host nor any cluster's pods.
const probeIndex = podnet.MaxClusters - 1

// testAPISecurity checks that each API server is reachable only from the
// host and its own cluster's pods, and only with credentials that RBAC
// lets do what they ask. env's clusters must be up.
func testAPISecurity(ctx context.Context, t *testing.T, env *clusters.Environment) {
	servers := map[string]string{} // cluster → host:port of its API server
	for _, c := range env.Clusters {
		u := strings.TrimPrefix(c.APIServer, "https://")
		host, _, err := net.SplitHostPort(u)
		require.NoError(t, err)
		require.NotEqual(t, "0.0.0.0", host)
		servers[c.Name] = u
	}

	t.Run("API servers closed to a foreign network namespace", func(t *testing.T) {
		// A namespace on a bridge of its own, routed through the host like
		// a pod: it reaches a listener on its gateway (so the path works)
		// and none of the API servers.
		netw, err := podnet.SetupCluster(ctx, podnet.ClusterConfig{Index: probeIndex, Name: fmt.Sprintf("apisec%d", os.Getpid()%100000), StateDir: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, netw.Close(context.Background())) })
		pod, err := netw.AddPod(ctx, podnet.PodSpec{UID: "a915ec00-probe"})
		require.NoError(t, err)
		control, err := net.Listen("tcp", net.JoinHostPort(netw.Gateway().String(), "0"))
		require.NoError(t, err)
		defer control.Close()
		go func() {
			for {
				c, err := control.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		got := connectFrom(ctx, t, pod.NetNS, append([]string{control.Addr().String()}, values(servers)...))
		require.Equal(t, "ok", got[control.Addr().String()], "control: the namespace reaches its gateway")
		for name, addr := range servers {
			require.Contains(t, got[addr], "connection refused", "API server of %s from a foreign namespace", name)
		}
	})

	t.Run("API server reachable from its own pods only", func(t *testing.T) {
		// A pod of e2e-b (the dial test's echo pods) reaches e2e-b's API
		// server, where in-cluster clients go, and not e2e-a's.
		b := newCluster(t, env, "e2e-b")
		client := b.waitPods(ctx, t, "app="+depName, 3)[0]
		got := connectFrom(ctx, t, podNetns(t, env, "e2e-b", string(client.UID)), values(servers))
		require.Equal(t, "ok", got[servers["e2e-b"]], "own API server from a pod")
		require.Contains(t, got[servers["e2e-a"]], "connection refused", "another cluster's API server from a pod")
	})

	t.Run("anonymous requests are refused", func(t *testing.T) {
		for _, c := range env.Clusters {
			ca, err := os.ReadFile(filepath.Join(clusters.StateHome(), envName, c.Name, "pki", "ca.crt"))
			require.NoError(t, err)
			pool := x509.NewCertPool()
			require.True(t, pool.AppendCertsFromPEM(ca))
			anon := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			for _, path := range []string{"/api/v1/namespaces/kube-system/secrets", "/version", "/readyz"} {
				resp, err := anon.Get(c.APIServer + path)
				require.NoError(t, err, "%s%s", c.APIServer, path)
				resp.Body.Close()
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "anonymous GET %s%s", c.APIServer, path)
			}
		}
	})

	t.Run("a node identity is forbidden what the admin may do", func(t *testing.T) {
		admin := clientFor(t, env.Kubeconfig, "e2e-a")
		node := clientFor(t, filepath.Join(clusters.StateHome(), envName, "e2e-a", "e2e-a-node-0.kubeconfig"), "e2e-a")
		_, err := admin.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		require.NoError(t, err, "admin lists Secrets")
		_, err = node.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		require.True(t, apierrors.IsForbidden(err), "node lists Secrets: %v", err)
		_, err = node.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-node-may-not"}}, metav1.CreateOptions{})
		require.True(t, apierrors.IsForbidden(err), "node creates a Namespace: %v", err)
		// The node still sees its own pods (the Node authorizer's scope).
		_, err = node.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=e2e-a-node-0"})
		require.NoError(t, err, "node lists its own pods")
	})

	t.Run("controllers act through their service accounts", func(t *testing.T) {
		admin := clientFor(t, env.Kubeconfig, "e2e-a")
		for _, sa := range []string{"deployment-controller", "statefulset-controller", "endpointslice-controller"} {
			_, err := admin.CoreV1().ServiceAccounts("kube-system").Get(ctx, sa, metav1.GetOptions{})
			require.NoError(t, err, "ServiceAccount kube-system/%s (--use-service-account-credentials)", sa)
		}
	})
}

func values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func clientFor(t *testing.T, kubeconfig, context string) kubernetes.Interface {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// connectFrom dials each address over TCP from inside netns and returns,
// per address, "ok" or the error.
func connectFrom(ctx context.Context, t *testing.T, netns string, addrs []string) map[string]string {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", netns, self, "-test.run=^TestHelperConnect$")
	cmd.Env = append(os.Environ(), connectEnv+"="+strings.Join(addrs, ","))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "helper in %s: %s", netns, out)
	got := map[string]string{}
	for line := range strings.SplitSeq(string(out), "\n") {
		if addr, res, ok := strings.Cut(strings.TrimPrefix(line, "connect "), " => "); ok && strings.HasPrefix(line, "connect ") {
			got[addr] = res
		}
	}
	for _, a := range addrs {
		require.Contains(t, got, a, "helper output: %s", out)
	}
	return got
}

// TestHelperConnect is not a test: connectFrom runs this binary inside a
// network namespace with connectEnv set, to dial addresses from there.
func TestHelperConnect(t *testing.T) {
	list := os.Getenv(connectEnv)
	if list == "" {
		t.Skip("helper process for the e2e test; runs only inside a network namespace")
	}
	for addr := range strings.SplitSeq(list, ",") {
		res := "ok"
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			res = "connection refused"
		case err != nil:
			res = err.Error()
		default:
			c.Close()
		}
		fmt.Printf("connect %s => %s\n", addr, res)
	}
}
