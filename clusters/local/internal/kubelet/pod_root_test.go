package kubelet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// rootProvider builds a provider on a real pod network (root only).
func rootProvider(t *testing.T) (*provider, *podnet.Cluster) {
	if err := podnet.RequireRoot(); err != nil {
		t.Skipf("skipping: pods run in real network namespaces: %v", err)
	}
	hostlock.Shared(t)
	ctx := context.Background()
	net, err := podnet.SetupCluster(ctx, podnet.ClusterConfig{Index: 86, Name: fmt.Sprintf("kt%d", os.Getpid()%100000), StateDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, net.Close(context.Background())) })
	self, err := os.Executable()
	require.NoError(t, err)
	cfg, err := Config{Kubeconfig: "unused", NodeName: "n0", Network: net, Dir: t.TempDir(),
		Images: map[string]string{"testsrv": self}, BackoffBase: 200 * time.Millisecond, VolumeResync: time.Hour,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}.withDefaults()
	require.NoError(t, err)
	p := &provider{cfg: cfg, log: cfg.Log, obj: testObjects(), pods: map[string]*podRuntime{}}
	return p, net
}

func servePod(name, secret string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf", UID: types.UID(name + "-0000-uid")},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr(int64(5)),
			Containers: []corev1.Container{{
				Name: "srv", Image: "testsrv:dev", TerminationMessagePath: testTerminationPath,
				Env: []corev1.EnvVar{{Name: "KUBELET_TEST_ROLE", Value: "serve"},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/etc/nvcf/kubelet-test/tls", ReadOnly: true}},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/readyz", Port: intstr.FromString("http")}}},
			}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		},
	}
}

// waitPod polls the provider's view of a pod until cond holds.
func waitPod(t *testing.T, p *provider, name string, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pod, err := p.GetPod(context.Background(), "nvcf", name)
		if err == nil && cond(pod) {
			return pod
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: timed out waiting for %s; last: %+v (err %v)", name, what, pod, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

func TestPodsRunAsProcessesInTheirNamespaces(t *testing.T) {
	p, net := rootProvider(t)
	// The empty mount point this test makes on the host (pods' contents never land there).
	t.Cleanup(func() { _ = os.RemoveAll("/etc/nvcf/kubelet-test") })
	obj := p.obj.(*fixedObjects)
	obj.secrets["nvcf/tls-b"] = &corev1.Secret{Data: map[string][]byte{"tls.crt": []byte("CERT-B")}}
	var mu sync.Mutex
	notified := 0
	p.NotifyPods(context.Background(), func(*corev1.Pod) { mu.Lock(); notified++; mu.Unlock() })
	ctx := context.Background()

	start := time.Now()
	require.NoError(t, p.CreatePod(ctx, servePod("a", "tls")))
	require.NoError(t, p.CreatePod(ctx, servePod("b", "tls-b")))
	a := waitPod(t, p, "a", "Ready", ready)
	b := waitPod(t, p, "b", "Ready", ready)
	t.Logf("two pods Ready in %s", time.Since(start))
	require.Equal(t, corev1.PodRunning, a.Status.Phase)
	require.NotEqual(t, a.Status.PodIP, b.Status.PodIP)
	require.True(t, podnet.PodPrefix(86).Contains(mustAddr(t, a.Status.PodIP)))
	require.True(t, *a.Status.ContainerStatuses[0].Started)
	mu.Lock()
	require.Positive(t, notified, "status changes are reported through NotifyPods")
	mu.Unlock()

	base := "http://" + a.Status.PodIP + ":8080"
	require.Equal(t, "CERT", get(t, base+"/file?path=/etc/nvcf/kubelet-test/tls/tls.crt"), "volume at its mountPath")
	require.Equal(t, "CERT-B", get(t, "http://"+b.Status.PodIP+":8080/file?path=/etc/nvcf/kubelet-test/tls/tls.crt"),
		"each pod sees its own contents at the same path")
	require.Equal(t, a.Status.PodIP, get(t, base+"/env?name=POD_IP"))
	require.Equal(t, "a", get(t, base+"/hostname"))
	require.Contains(t, get(t, base+"/file?path=/etc/resolv.conf"), "nameserver "+net.Gateway().String())
	_, err := os.Stat("/etc/nvcf/kubelet-test/tls/tls.crt")
	require.True(t, os.IsNotExist(err), "mounts stay inside the container's mount namespace")

	// kubectl exec: the command sees the container's mounts and env.
	var out bytes.Buffer
	attach := testAttach{out: nopCloser{&out}}
	require.NoError(t, p.RunInContainer(ctx, "nvcf", "a", "srv",
		[]string{"sh", "-c", "cat /etc/nvcf/kubelet-test/tls/tls.crt; echo \" $POD_IP $(hostname)\""}, attach))
	require.Equal(t, "CERT "+a.Status.PodIP+" a\n", out.String())
	require.Error(t, p.RunInContainer(ctx, "nvcf", "a", "srv", []string{"false"}, attach), "the exit status is reported")

	// A crash restarts the container after the back-off; the log of the
	// previous run stays readable.
	if resp, err := http.Get(base + "/crash"); err == nil { // the server dies mid-request
		resp.Body.Close()
	}
	a = waitPod(t, p, "a", "restart", func(p *corev1.Pod) bool {
		return p.Status.ContainerStatuses[0].RestartCount == 1 && ready(p)
	})
	require.Equal(t, int32(3), a.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode)
	require.Equal(t, "crashed on request", a.Status.ContainerStatuses[0].LastTerminationState.Terminated.Message,
		"what the process wrote to its terminationMessagePath")
	_, err = os.Stat(testTerminationPath)
	require.NoError(t, err, "the mount point")
	require.Empty(t, get(t, base+"/file?path="+testTerminationPath), "the restarted container starts with an empty message file")
	rc, err := p.GetContainerLogs(ctx, "nvcf", "a", "srv", api.ContainerLogOpts{Previous: true})
	require.NoError(t, err)
	logs, _ := io.ReadAll(rc)
	rc.Close()
	require.Contains(t, string(logs), "serving on :8080")

	// Deletion: SIGTERM, the process exits 0, the namespace goes away.
	gone := a.DeepCopy()
	gone.DeletionGracePeriodSeconds = ptr(int64(5))
	require.NoError(t, p.DeletePod(ctx, gone))
	r := p.get("nvcf", "a")
	require.NotNil(t, r)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		t.Fatal("pod a did not stop")
	}
	final := r.snapshot()
	term := final.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	require.Equal(t, int32(0), term.ExitCode, "the server exits 0 on SIGTERM")
	require.NotContains(t, net.Pods(), string(a.UID))
	_, err = os.Stat("/run/netns/" + podnet.NetnsName(net.Index(), net.Name(), string(a.UID)))
	require.True(t, os.IsNotExist(err))

	stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	p.stopAll(stopCtx)
	require.NoError(t, stopCtx.Err())
	require.True(t, strings.HasPrefix(final.Status.ContainerStatuses[0].ContainerID, "nvcf://"))
}

type nopCloser struct{ w io.Writer }

func (n nopCloser) Write(p []byte) (int, error) { return n.w.Write(p) }
func (nopCloser) Close() error                  { return nil }

// testAttach is the streams of a non-interactive `kubectl exec`.
type testAttach struct{ out io.WriteCloser }

func (a testAttach) Stdin() io.Reader            { return nil }
func (a testAttach) Stdout() io.WriteCloser      { return a.out }
func (a testAttach) Stderr() io.WriteCloser      { return a.out }
func (a testAttach) TTY() bool                   { return false }
func (a testAttach) Resize() <-chan api.TermSize { return nil }
