package faults

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// These tests use client-go's fake clientset for the API calls; the e2e
// resilience scenarios run the same actions against real clusters.

func pod(name, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf", UID: types.UID(uid), Labels: map[string]string{"app": "stargate"}}}
}

func TestPodDeleteGraceAndCount(t *testing.T) {
	cs := fake.NewClientset(pod("sg-0", "u0"), pod("sg-1", "u1"), pod("sg-2", "u2"))
	f := Fault{Action: podDelete{Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Selector: "app=stargate", Count: 2, Immediate: true}}
	require.NoError(t, run(context.Background(), withDuration(f, time.Millisecond), nil))
	left, err := cs.CoreV1().Pods("nvcf").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, left.Items, 1)
	var graces []int64
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			require.NotNil(t, d.DeleteOptions.GracePeriodSeconds)
			graces = append(graces, *d.DeleteOptions.GracePeriodSeconds)
		}
	}
	require.Equal(t, []int64{0, 0}, graces)

	_, err = Start(context.Background(), Fault{Action: podDelete{Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Selector: "app=pylon"}}, nil)
	require.ErrorContains(t, err, `no running pod matches "app=pylon"`)
}

func withDuration(f Fault, d time.Duration) Fault { f.Duration = d; return f }

func TestScaleAndUndo(t *testing.T) {
	three := int32(3)
	cs := fake.NewClientset(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "stargate", Namespace: "nvcf"}, Spec: appsv1.StatefulSetSpec{Replicas: &three}})
	get := func() int32 {
		s, err := cs.AppsV1().StatefulSets("nvcf").Get(context.Background(), "stargate", metav1.GetOptions{})
		require.NoError(t, err)
		return *s.Spec.Replicas
	}
	dir := t.TempDir()
	h, err := Start(context.Background(), Fault{Action: scale{Cluster: Cluster{clientset: cs, Kubeconfig: "/k", Context: "region-a"}, Namespace: "nvcf", Workload: "StatefulSet", Name: "stargate", Replicas: 1}}, NewRecorder(dir, nil))
	require.NoError(t, err)
	require.Equal(t, int32(1), get())
	es, err := List(dir)
	require.NoError(t, err)
	require.Len(t, es, 1, "the journal holds the fault while it is active")
	require.True(t, es[0].Alive)
	require.NoError(t, h.Stop(context.Background()))
	require.Equal(t, int32(3), get())
	es, err = List(dir)
	require.NoError(t, err)
	require.Empty(t, es)

	_, err = Start(context.Background(), Fault{Action: scale{Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Workload: "DaemonSet", Name: "x"}}, nil)
	require.ErrorContains(t, err, "want Deployment or StatefulSet")
}

func TestCertRotateAndRestore(t *testing.T) {
	orig := map[string][]byte{"tls.crt": []byte("GOOD CERT"), "tls.key": []byte("GOOD KEY"), "ca.crt": []byte("ROOT")}
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ingress-tls", Namespace: "nvcf"}, Data: orig, Type: corev1.SecretTypeTLS})
	data := func() map[string][]byte {
		s, err := cs.CoreV1().Secrets("nvcf").Get(context.Background(), "ingress-tls", metav1.GetOptions{})
		require.NoError(t, err)
		return s.Data
	}
	rec := NewRecorder(t.TempDir(), nil)
	h, err := Start(context.Background(), Fault{Target: Target{Cluster: "region-a", Service: "nvcf/ingress-tls"}, Action: CertRotate{
		Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Secret: "ingress-tls",
		Cert: []byte("WRONG ROOT CERT"), Key: []byte("WRONG ROOT KEY"), Variant: "wrong-root",
	}}, rec)
	require.NoError(t, err)
	require.Equal(t, "WRONG ROOT CERT", string(data()["tls.crt"]))
	require.Equal(t, "ROOT", string(data()["ca.crt"]), "ca.crt is kept unless CA is given")
	require.Contains(t, rec.active()[0].Params, "wrong-root")
	require.NoError(t, h.Stop(context.Background()))
	require.Equal(t, orig, data())
}

func TestPodCrashKillsTheProcessBehindTheAPIsBack(t *testing.T) {
	const uid = "7c6b5a49-3827-4615-a0b9-c8d7e6f5a4b3"
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), "NVCF_POD_UID="+uid)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	cs := fake.NewClientset(pod("sg-0", uid))
	_, err := Start(context.Background(), Fault{Action: podCrash{Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Name: "sg-0", OnHost: true}}, nil)
	require.NoError(t, err)
	select {
	case err := <-exited:
		require.ErrorContains(t, err, "killed")
	case <-time.After(20 * time.Second):
		t.Fatal("the pod's process survived")
	}
	// Kubernetes was not told: the pod object is untouched.
	_, err = cs.CoreV1().Pods("nvcf").Get(context.Background(), "sg-0", metav1.GetOptions{})
	require.NoError(t, err)

	// A pod without processes here is an error that says why.
	cs2 := fake.NewClientset(pod("sg-9", "00000000-0000-0000-0000-000000000000"))
	_, err = Start(context.Background(), Fault{Action: podCrash{Cluster: Cluster{clientset: cs2}, Namespace: "nvcf", Name: "sg-9", OnHost: true}}, nil)
	require.ErrorContains(t, err, "embedded provider")

	// A provider that runs the pods elsewhere gives no seam: the fault is
	// refused before it looks for processes, and scenarios skip on it.
	_, err = Start(context.Background(), Fault{Action: podCrash{Cluster: Cluster{clientset: cs}, Namespace: "nvcf", Name: "sg-0"}}, nil)
	require.ErrorIs(t, err, ErrNoSeam)
	require.ErrorContains(t, err, "pods' processes on this host")
}
