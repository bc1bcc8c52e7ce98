package kubelet

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod deleted and created again under the same name while the old one
// still stops: virtual-kubelet asks GetPod by name, then calls UpdatePod
// when the provider still knows the name. The stopping pod must be hidden,
// and an update of another UID must start the replacement (CreatePod,
// which waits for the old one), never fail: a NotFound there makes
// virtual-kubelet mark a restartPolicy Never pod Failed.
func TestASameNameReplacementIsCreatedNotRefused(t *testing.T) {
	k := &provider{log: slog.New(slog.DiscardHandler), pods: map[string]*podRuntime{}}
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sg-variant", Namespace: "nvcf", UID: "u1"}}
	old := newPodRuntime(k, oldPod)
	k.pods[key("nvcf", "sg-variant")] = old

	old.stop(nil) // deleted; its processes still stop (done stays open)
	_, err := k.GetPod(context.Background(), "nvcf", "sg-variant")
	require.True(t, errdefs.IsNotFound(err), "a stopping pod is hidden from virtual-kubelet: %v", err)

	// The replacement waits for the old pod to stop; a cancelled context
	// shows it took that path instead of refusing the update.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	newPod := oldPod.DeepCopy()
	newPod.UID = "u2"
	err = k.UpdatePod(ctx, newPod)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errdefs.IsNotFound(err))
}
