package scenarios

import (
	"context"
	"log/slog"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// renderedStargate renders a region's objects for kind and returns the
// Stargate workload's pod template and the headless Service.
func renderedStargate(t *testing.T, kind matrix.Kind, flavor manifests.Flavor) (*corev1.PodTemplateSpec, *corev1.Service) {
	t.Helper()
	objs, err := manifests.Render(manifests.Values{Cluster: "region-a", Flavor: flavor, Stargate: &manifests.Stargate{
		Kind: kind, Replicas: 2, IdentityTemplate: "{pod_name}.sg.region-a.nvcf.test",
		GRPCHost: "stargate.region-a.nvcf.test", QUICHost: "quic.region-a.nvcf.test", HTTPHost: "invoke.region-a.nvcf.test",
		GRPCPylonDialAddr: "https://stargate.region-a.nvcf.test:50071", QUICPylonDialAddr: "quic.region-a.nvcf.test:50072",
		AuthSecret: manifests.AuthSecret,
	}})
	require.NoError(t, err)
	var tmpl *corev1.PodTemplateSpec
	var svc *corev1.Service
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.StatefulSet:
			tmpl = &o.Spec.Template
		case *appsv1.Deployment:
			if o.Name == manifests.StargateName {
				tmpl = &o.Spec.Template
			}
		case *corev1.Service:
			if o.Name == manifests.HeadlessService {
				svc = o
			}
		}
	}
	require.NotNil(t, tmpl, "no Stargate workload rendered")
	require.NotNil(t, svc, "no headless Service rendered")
	return tmpl, svc
}

// The not-ready pod is the workload's own pod, in the Service, adopted by
// no controller, with a readiness probe no container passes; its other
// probes and containers are the template's.
func TestNotReadyPodIsAStargateTheServiceSelects(t *testing.T) {
	ordinal := regexp.MustCompile(`^` + manifests.StargateName + `-[0-9]+$`)
	for _, flavor := range []manifests.Flavor{manifests.FlavorReference, manifests.FlavorNVCF} {
		for _, kind := range []matrix.Kind{matrix.KindStatefulSet, matrix.KindDeployment} {
			t.Run(string(flavor)+"/"+string(kind), func(t *testing.T) {
				tmpl, svc := renderedStargate(t, kind, flavor)
				pod := notReadyPod(tmpl, "nvcf")
				require.Equal(t, "nvcf", pod.Namespace)
				require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)), "the headless Service selects it")
				require.True(t, deploy.StargateSelector().Matches(labels.Set(pod.Labels)), "the harness counts it as a Stargate pod")
				require.False(t, ordinal.MatchString(pod.Name), "a StatefulSet ordinal name would let the StatefulSet adopt it")
				require.NotContains(t, pod.Labels, appsv1.DefaultDeploymentUniqueLabelKey, "a ReplicaSet would adopt it")
				require.NotContains(t, pod.Labels, appsv1.ControllerRevisionHashLabelKey)
				require.Len(t, pod.Spec.Containers, len(tmpl.Spec.Containers))
				for i, c := range pod.Spec.Containers {
					want := tmpl.Spec.Containers[i].DeepCopy()
					want.ReadinessProbe = neverReady
					require.Equal(t, *want, c, "container %s differs from the template beyond its readiness probe", c.Name)
				}
				require.NotSame(t, neverReady, pod.Spec.Containers[0].ReadinessProbe)
				require.NotNil(t, tmpl.Spec.Containers[0].ReadinessProbe, "the template itself is untouched")
				require.NotEqual(t, neverReady, tmpl.Spec.Containers[0].ReadinessProbe)
			})
		}
	}
}

// kubeDeployer hands out one fake clientset.
type kubeDeployer struct {
	fakeDeployer
	cs kubernetes.Interface
}

func (k *kubeDeployer) Client(string) (kubernetes.Interface, error) { return k.cs, nil }

// A not-ready Stargate that never comes up (no kubelet runs the fake's
// pods) is a step's failure naming it, fn never runs, and the pod is gone
// afterwards.
func TestNotReadyStargateThatNeverRunsIsAStepFailureAndIsDeleted(t *testing.T) {
	tmpl, _ := renderedStargate(t, matrix.KindStatefulSet, manifests.FlavorReference)
	cs := fake.NewClientset(&appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: manifests.StargateName, Namespace: "nvcf"},
		Spec:       appsv1.StatefulSetSpec{Template: *tmpl},
	})
	w := &World{Config: &catalog.RunConfig{TimeScale: 0.02}, deployer: &kubeDeployer{cs: cs}, Log: slog.New(slog.DiscardHandler)}
	e := &Env{World: w, Deployed: &deploy.Result{Namespace: "nvcf"}, Evidence: t.TempDir()}
	ran := false
	err := e.WithNotReadyStargate(context.Background(), "region-a", func(context.Context, Pod) error {
		ran = true
		return nil
	})
	require.False(t, ran)
	se := stepFailure(err)
	require.NotNil(t, se, "%v", err)
	require.Contains(t, se.step, "start a not-ready Stargate")
	_, gerr := cs.CoreV1().Pods("nvcf").Get(context.Background(), notReadyName, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(gerr), "the pod is deleted: %v", gerr)
	require.Empty(t, e.mustAnswer)
}
