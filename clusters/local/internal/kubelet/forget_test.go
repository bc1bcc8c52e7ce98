package kubelet

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A pod that stopped because it was deleted is removed from the API at
// once; one that stopped for another reason (agent shutdown) is not. (The
// UID precondition that spares a same-name replacement is the apiserver's
// to enforce; the fake clientset ignores preconditions.)
func TestForgetDeletesAStoppedDeletedPod(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sg-1", Namespace: "nvcf", UID: "u1"}}
	client := fake.NewClientset(pod.DeepCopy())
	k := &provider{client: client, log: slog.New(slog.DiscardHandler)}

	k.forget(pod)
	_, err := client.CoreV1().Pods("nvcf").Get(ctx, "sg-1", metav1.GetOptions{})
	require.NoError(t, err, "not being deleted: left alone")

	now := metav1.Now()
	pod.DeletionTimestamp = &now
	k.forget(pod)
	_, err = client.CoreV1().Pods("nvcf").Get(ctx, "sg-1", metav1.GetOptions{})
	require.Error(t, err, "the stopped pod is gone")
	k.forget(pod) // already gone: no error, no panic
}
