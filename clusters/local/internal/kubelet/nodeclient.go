package kubelet

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// vkClient is the client given to virtual-kubelet. Its node library always
// starts cluster-wide Secret and ConfigMap informers, for resolving pods'
// environment, which this kubelet does itself (SkipDownwardAPIResolution)
// with a get per object. A node identity may not list those cluster-wide
// (the Node authorizer grants a get of what its own pods use), so the
// informers would fail and retry forever; here their lists are empty and
// their watches silent, and every other call goes to the API server.
type vkClient struct{ kubernetes.Interface }

func (c vkClient) CoreV1() typedcorev1.CoreV1Interface { return vkCore{c.Interface.CoreV1()} }

// IsWatchListSemanticsUnSupported makes the informers list and then watch,
// rather than ask for a watch that streams the initial list, which the
// silent watches below never would.
func (vkClient) IsWatchListSemanticsUnSupported() bool { return true }

type vkCore struct{ typedcorev1.CoreV1Interface }

func (c vkCore) Secrets(ns string) typedcorev1.SecretInterface {
	return unlistedSecrets{c.CoreV1Interface.Secrets(ns)}
}

func (c vkCore) ConfigMaps(ns string) typedcorev1.ConfigMapInterface {
	return unlistedConfigMaps{c.CoreV1Interface.ConfigMaps(ns)}
}

type unlistedSecrets struct{ typedcorev1.SecretInterface }

func (unlistedSecrets) List(context.Context, metav1.ListOptions) (*corev1.SecretList, error) {
	return &corev1.SecretList{}, nil
}

func (unlistedSecrets) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

type unlistedConfigMaps struct{ typedcorev1.ConfigMapInterface }

func (unlistedConfigMaps) List(context.Context, metav1.ListOptions) (*corev1.ConfigMapList, error) {
	return &corev1.ConfigMapList{}, nil
}

func (unlistedConfigMaps) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}
