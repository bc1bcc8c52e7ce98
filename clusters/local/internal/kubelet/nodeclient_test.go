package kubelet

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/watchlist"
)

// virtual-kubelet's cluster-wide Secret and ConfigMap informers see
// nothing; a single get, and every other resource, goes to the API.
func TestVKClientHidesOnlyCollectionReads(t *testing.T) {
	ctx := context.Background()
	meta := metav1.ObjectMeta{Name: "x", Namespace: "ns"}
	c := vkClient{fake.NewClientset(&corev1.Secret{ObjectMeta: meta}, &corev1.ConfigMap{ObjectMeta: meta}, &corev1.Pod{ObjectMeta: meta})}
	secrets, err := c.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, secrets.Items)
	cms, err := c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, cms.Items)
	w, err := c.CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	w.Stop()
	_, err = c.CoreV1().Secrets("ns").Get(ctx, "x", metav1.GetOptions{})
	require.NoError(t, err)
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	require.True(t, watchlist.DoesClientNotSupportWatchListSemantics(c))
}
