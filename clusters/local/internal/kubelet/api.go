package kubelet

import (
	"context"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// apiObjects reads ConfigMaps and Secrets from the apiserver (fresh on
// every call, so a pod never starts with a stale copy) and requests tokens.
type apiObjects struct{ client kubernetes.Interface }

// objectRequestTimeout bounds each request (client-go sets none): a
// stalled request would hold up a container start or a volume sync for as
// long as it stalls; the callers retry instead.
const objectRequestTimeout = 10 * time.Second

func (a apiObjects) ConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	ctx, cancel := context.WithTimeout(ctx, objectRequestTimeout)
	defer cancel()
	return a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

func (a apiObjects) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, objectRequestTimeout)
	defer cancel()
	return a.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

func (a apiObjects) Token(ctx context.Context, pod *corev1.Pod, sa string, spec authnv1.TokenRequestSpec) (*authnv1.TokenRequestStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, objectRequestTimeout)
	defer cancel()
	spec.BoundObjectRef = &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	tr, err := a.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authnv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &tr.Status, nil
}
