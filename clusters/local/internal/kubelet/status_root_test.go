package kubelet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/apitest"
)

// quickExitPod is a pod whose one container exits 3 as soon as it starts.
func quickExitPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf"},
		Spec: corev1.PodSpec{
			NodeName: "n0", RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr(false),
			Containers: []corev1.Container{{Name: "exit", Image: "testsrv:dev",
				Env: []corev1.EnvVar{{Name: "KUBELET_TEST_ROLE", Value: "exit"}}}},
		},
	}
}

// 150 pods whose container exits within milliseconds of its start, all
// created at once, reach the API with their exit (Failed, exit code 3)
// through virtual-kubelet's status path alone: nothing else writes pod
// statuses. Such a burst is what ran up the debt of virtual-kubelet's
// default limiter (see paceStatusUpdates): with it, the exits reached the
// API up to 20 s after the containers ended; paced per pod, within 1.3 s.
func TestQuickExitsReachTheAPI(t *testing.T) {
	if err := podnet.RequireRoot(); err != nil {
		t.Skipf("skipping: pods run in real network namespaces: %v", err)
	}
	hostlock.Shared(t)
	api := apitest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	net, err := podnet.SetupCluster(ctx, podnet.ClusterConfig{Index: 86, Name: fmt.Sprintf("ks%d", os.Getpid()%100000), StateDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, net.Close(context.Background())) })
	self, err := os.Executable()
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Kubeconfig: api.Kubeconfig, NodeName: "n0", Network: net, Dir: t.TempDir(),
			Images: map[string]string{"testsrv": self}, KubeletPort: 10286, VolumeResync: time.Hour,
			Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	c := api.Client.CoreV1()
	_, err = c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nvcf"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.ServiceAccounts("nvcf").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	const pods = 150
	created := map[string]time.Time{}
	seen := map[string]time.Duration{}
	var mu sync.Mutex
	w, err := c.Pods("nvcf").Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if ok && p.Status.Phase == corev1.PodFailed {
				mu.Lock()
				if _, ok := seen[p.Name]; !ok {
					seen[p.Name] = time.Since(created[p.Name])
				}
				mu.Unlock()
			}
		}
	}()
	for i := range pods {
		mu.Lock()
		created[fmt.Sprintf("quick-%d", i)] = time.Now()
		mu.Unlock()
		_, err := c.Pods("nvcf").Create(ctx, quickExitPod(fmt.Sprintf("quick-%d", i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	var lost []string
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	err = wait.PollUntilContextCancel(wctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := c.Pods("nvcf").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		lost = lost[:0]
		for _, p := range list.Items {
			cs := p.Status.ContainerStatuses
			if p.Status.Phase != corev1.PodFailed || len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 3 {
				lost = append(lost, fmt.Sprintf("%s %s %+v", p.Name, p.Status.Phase, cs))
			}
		}
		return len(lost) == 0, nil
	})
	w.Stop()
	mu.Lock()
	slowest := time.Duration(0)
	for _, d := range seen {
		slowest = max(slowest, d)
	}
	t.Logf("slowest pod, from creation to its exit in the API: %s", slowest)
	mu.Unlock()
	require.NoError(t, err, "pods whose exit the API never saw: %v", lost)
}
