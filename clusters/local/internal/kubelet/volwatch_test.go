package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestVolumeObjectsListsEachMountedObjectOnce(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}},
		{Name: "b", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "trust"}}}},
		{Name: "c", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		}}}},
		{Name: "d", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	secrets, configMaps := volumeObjects(pod)
	require.Equal(t, []string{"tls"}, secrets)
	require.Equal(t, []string{"trust", "extra"}, configMaps)
}

// A change to a mounted Secret is signalled; a change to another is not.
func TestWatchVolumeObjectsSignalsChanges(t *testing.T) {
	ns := "nvcf"
	tls := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls"}, Data: map[string][]byte{"k": []byte("1")}}
	client := fake.NewClientset(tls)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 1)
	watchVolumeObjects(ctx, client, pod, changed)
	update := func() {
		s, err := client.CoreV1().Secrets(ns).Get(ctx, "tls", metav1.GetOptions{})
		require.NoError(t, err)
		s.Data["k"] = append(s.Data["k"], '1')
		_, err = client.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	// The fake's watch starts asynchronously: update until a change is seen.
	require.Eventually(t, func() bool {
		update()
		select {
		case <-changed:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 5*time.Second, time.Millisecond)
}
