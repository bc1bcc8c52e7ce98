package kubelet

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/clusters/local/internal/podnet"
)

// A container exit the API never heard of is written on the second pass
// that sees the same difference, not on the first (virtual-kubelet may
// have that update in flight); a pod whose API status matches is left alone.
func TestRepairPassWritesAMissedExit(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sg-variant", Namespace: "nvcf", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "n0", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "stargate"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "stargate", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
	client := fake.NewClientset(pod.DeepCopy())
	k := &provider{client: client, log: slog.New(slog.DiscardHandler), pods: map[string]*podRuntime{},
		cfg: Config{NodeName: "n0", Network: &podnet.Cluster{}, Dir: t.TempDir()}}
	r := newPodRuntime(k, pod.DeepCopy())
	k.pods[key("nvcf", "sg-variant")] = r

	r.ctrs[0].state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "insecure-refused"}}
	r.failed = "container stargate failed"
	want := r.snapshot().Status
	require.NotEqual(t, statusDigest(pod.Status), statusDigest(want), "the test needs a difference")

	pending := k.repairPass(ctx, nil)
	require.Len(t, pending, 1, "first sighting: remembered, not written")
	got, err := client.CoreV1().Pods("nvcf").Get(ctx, "sg-variant", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, statusDigest(pod.Status), statusDigest(got.Status))

	pending = k.repairPass(ctx, pending)
	require.Empty(t, pending)
	got, err = client.CoreV1().Pods("nvcf").Get(ctx, "sg-variant", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, statusDigest(want), statusDigest(got.Status))
	require.Equal(t, "insecure-refused", got.Status.ContainerStatuses[0].State.Terminated.Message)

	require.Empty(t, k.repairPass(ctx, nil), "once they agree there is nothing to repair")
}
