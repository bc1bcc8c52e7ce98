package deploy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/wire/reason"
)

func pod(name string, ready bool, lbl map[string]string) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf", Labels: lbl},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "stargate", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}},
	}
}

func TestStatefulSetReadiness(t *testing.T) {
	ctx := context.Background()
	sel := manifests.Selector(manifests.StargateName, manifests.StargateName)
	three := int32(3)
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "stargate", Namespace: "nvcf", Generation: 2},
		Spec:       appsv1.StatefulSetSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: sel}},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, CurrentRevision: "r1", UpdateRevision: "r1"},
	}
	cs := fake.NewClientset(ss, pod("stargate-0", true, sel), pod("stargate-1", true, sel), pod("stargate-2", false, sel))
	done, state, err := statefulSetReady(cs, "nvcf", "stargate")(ctx)
	require.NoError(t, err)
	require.False(t, done)
	require.Contains(t, state.text, "2/3 ready")
	require.NotContains(t, state.text, "stargate-2", "pods are listed only when a wait gives up")
	require.Contains(t, state.describe(ctx), "stargate-2(Running,stargate waiting CrashLoopBackOff")

	// A wait that cannot finish ends at its deadline with the last state.
	wctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	err = waitFor(wctx, "statefulset nvcf/stargate ready", statefulSetReady(cs, "nvcf", "stargate"))
	require.ErrorContains(t, err, "gave up after")
	require.ErrorContains(t, err, "2/3 ready")
	require.ErrorContains(t, err, "stargate-2(Running,stargate waiting CrashLoopBackOff", "a wait that gives up describes the pods")

	ss.Status.ReadyReplicas = 3
	_, err = cs.AppsV1().StatefulSets("nvcf").UpdateStatus(ctx, ss, metav1.UpdateOptions{})
	require.NoError(t, err)
	p2 := pod("stargate-2", true, sel)
	_, err = cs.CoreV1().Pods("nvcf").UpdateStatus(ctx, p2, metav1.UpdateOptions{})
	require.NoError(t, err)
	done, _, err = statefulSetReady(cs, "nvcf", "stargate")(ctx)
	require.NoError(t, err)
	require.True(t, done)

	// An extra (old) pod matching the selector keeps it not ready.
	_, err = cs.CoreV1().Pods("nvcf").Create(ctx, pod("stargate-7d9f-abcde", true, sel), metav1.CreateOptions{})
	require.NoError(t, err)
	done, state, err = statefulSetReady(cs, "nvcf", "stargate")(ctx)
	require.NoError(t, err)
	require.False(t, done, state.text)
}

func TestDeploymentReadinessNeedsTheLatestGeneration(t *testing.T) {
	ctx := context.Background()
	sel := manifests.Selector(manifests.PylonName, manifests.PylonName)
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pylon", Namespace: "nvcf", Generation: 3},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1},
	}
	cs := fake.NewClientset(d, pod("pylon-abc", true, sel))
	done, state, err := deploymentReady(cs, "nvcf", "pylon")(ctx)
	require.NoError(t, err)
	require.False(t, done)
	require.Contains(t, state.text, "generation 3 observed 2")
	d.Status.ObservedGeneration = 3
	_, err = cs.AppsV1().Deployments("nvcf").UpdateStatus(ctx, d, metav1.UpdateOptions{})
	require.NoError(t, err)
	done, _, err = deploymentReady(cs, "nvcf", "pylon")(ctx)
	require.NoError(t, err)
	require.True(t, done)
}

func TestLoadBalancerReadiness(t *testing.T) {
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "stargate-grpc", Namespace: "nvcf",
		Annotations: map[string]string{clusters.ExternalHostnamesAnnotation: "stargate.region-a.nvcf.test"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	cs := fake.NewClientset(svc)
	done, state, err := lbReady(cs, "nvcf", "stargate-grpc")(ctx)
	require.NoError(t, err)
	require.False(t, done)
	require.Contains(t, state.text, "ingress is empty")
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.19.100.1"}}
	_, err = cs.CoreV1().Services("nvcf").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	require.NoError(t, err)
	done, _, err = lbReady(cs, "nvcf", "stargate-grpc")(ctx)
	require.NoError(t, err)
	require.True(t, done)
	lb, err := loadBalancer(ctx, cs, svc)
	require.NoError(t, err)
	require.Equal(t, LoadBalancer{Service: "stargate-grpc", Hostnames: []string{"stargate.region-a.nvcf.test"}, Addresses: []string{"198.19.100.1"}}, lb)
}

// A base Pylon that never becomes available, whose refusal the watch
// establishes on its second look: the wait ends with that typed refusal,
// not at its deadline; another Deployment's wait is not watched.
func TestWaitForBasePylonStopsOnItsRefusal(t *testing.T) {
	ctx := context.Background()
	one := int32(1)
	unready := func(name string) (*appsv1.Deployment, *corev1.Pod) {
		sel := manifests.Selector(manifests.PylonName, name)
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf", Generation: 1},
			Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel}},
			Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1},
		}, pod(name+"-abc", false, sel)
	}
	base, basePod := unready(manifests.PylonName)
	looks := 0
	watch := func(context.Context) error {
		looks++
		if looks < 2 {
			return nil
		}
		return reason.WrapFrom(reason.PlaintextToTLS, reason.OriginIngress, errors.New("region-a's ingress saw the plaintext preface"))
	}
	cs := fake.NewClientset(base, basePod)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := waitReady(wctx, cs, []manifests.Object{base}, watch)
	require.ErrorContains(t, err, "stopped waiting after")
	require.ErrorContains(t, err, "deployment nvcf/pylon available")
	var re *reason.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, reason.PlaintextToTLS, re.Reason)
	require.Equal(t, reason.OriginIngress, re.Origin)
	require.Equal(t, 2, looks)
	require.NoError(t, wctx.Err(), "the wait ended before its deadline")

	variant, variantPod := unready("pylon-other")
	cs = fake.NewClientset(variant, variantPod)
	looks = 0
	vctx, vcancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer vcancel()
	err = waitReady(vctx, cs, []manifests.Object{variant}, watch)
	require.ErrorContains(t, err, "gave up after")
	require.Zero(t, looks, "only the base Pylon's wait is watched")
}

// A base Pylon that runs but stays unready, with nothing typed refusing
// it, is deployed once rolled out after pylonReadyGrace: the cell's
// baseline and its cases judge it, the deploy does not time out on it.
func TestWaitForBasePylonUnreadyWithoutRefusalIsRolledOut(t *testing.T) {
	old := pylonReadyGrace
	pylonReadyGrace = 300 * time.Millisecond
	t.Cleanup(func() { pylonReadyGrace = old })
	one := int32(1)
	sel := manifests.Selector(manifests.PylonName, manifests.PylonName)
	base := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: manifests.PylonName, Namespace: "nvcf", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1},
	}
	cs := fake.NewClientset(base, pod(manifests.PylonName+"-abc", false, sel))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, waitReady(ctx, cs, []manifests.Object{base}, func(context.Context) error { return nil }))
	require.NoError(t, ctx.Err())

	// Not rolled out (an old replica still counted): the wait goes on to its deadline.
	base.Status.Replicas = 2
	cs = fake.NewClientset(base, pod(manifests.PylonName+"-abc", false, sel))
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	require.ErrorContains(t, waitReady(sctx, cs, []manifests.Object{base}, func(context.Context) error { return nil }), "rolled out")
}
