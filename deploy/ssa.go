package deploy

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
)

// applyData is the server-side apply body of obj: its fields with the
// kind set and the server-owned ones (status, creationTimestamp) removed.
func applyData(obj manifests.Object) ([]byte, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return nil, fmt.Errorf("%T %s: no kind in the scheme: %v", obj, obj.GetName(), err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvks[0].Kind, obj.GetName(), err)
	}
	u["apiVersion"], u["kind"] = gvks[0].GroupVersion().String(), gvks[0].Kind
	delete(u, "status")
	if md, ok := u["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return json.Marshal(u)
}

// kindOf names obj's kind for messages.
func kindOf(obj runtime.Object) string {
	if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0].Kind
	}
	return fmt.Sprintf("%T", obj)
}

// apply server-side-applies obj (create or update), forcing ownership of
// the fields it sets.
func apply(ctx context.Context, cs kubernetes.Interface, obj manifests.Object) error {
	data, err := applyData(obj)
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: FieldManager, Force: &force}
	ns, name, pt := obj.GetNamespace(), obj.GetName(), types.ApplyPatchType
	switch obj.(type) {
	case *corev1.Namespace:
		_, err = cs.CoreV1().Namespaces().Patch(ctx, name, pt, data, opts)
	case *corev1.ServiceAccount:
		_, err = cs.CoreV1().ServiceAccounts(ns).Patch(ctx, name, pt, data, opts)
	case *corev1.ConfigMap:
		_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, pt, data, opts)
	case *corev1.Secret:
		_, err = cs.CoreV1().Secrets(ns).Patch(ctx, name, pt, data, opts)
	case *corev1.Service:
		_, err = cs.CoreV1().Services(ns).Patch(ctx, name, pt, data, opts)
	case *rbacv1.Role:
		_, err = cs.RbacV1().Roles(ns).Patch(ctx, name, pt, data, opts)
	case *rbacv1.RoleBinding:
		_, err = cs.RbacV1().RoleBindings(ns).Patch(ctx, name, pt, data, opts)
	case *appsv1.Deployment:
		_, err = cs.AppsV1().Deployments(ns).Patch(ctx, name, pt, data, opts)
	case *appsv1.StatefulSet:
		_, err = cs.AppsV1().StatefulSets(ns).Patch(ctx, name, pt, data, opts)
	default:
		return fmt.Errorf("apply %s %s/%s: kind not supported by deploy; add it to apply()", kindOf(obj), ns, name)
	}
	if err != nil {
		return fmt.Errorf("apply %s %s/%s: %w", kindOf(obj), ns, name, err)
	}
	return nil
}

// workloadKey names a Deployment or StatefulSet.
type workloadKey struct {
	Kind matrix.Kind
	Name string
}

// deleteWorkload deletes a Deployment or StatefulSet with its pods in the
// background; a missing object is not an error.
func deleteWorkload(ctx context.Context, cs kubernetes.Interface, ns string, k workloadKey) error {
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	var err error
	switch k.Kind {
	case matrix.KindDeployment:
		err = cs.AppsV1().Deployments(ns).Delete(ctx, k.Name, opts)
	case matrix.KindStatefulSet:
		err = cs.AppsV1().StatefulSets(ns).Delete(ctx, k.Name, opts)
	default:
		return fmt.Errorf("delete %s %s/%s: not a workload kind", k.Kind, ns, k.Name)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", k.Kind, ns, k.Name, err)
	}
	return nil
}

// managedWorkloads lists the Deployments and StatefulSets in ns that the
// harness applied, except Pylon variants (those belong to scenarios).
func managedWorkloads(ctx context.Context, cs kubernetes.Interface, ns string) ([]workloadKey, error) {
	sel := metav1.ListOptions{LabelSelector: manifests.ManagedByLabel + "=" + manifests.ManagedBy + "," + "!" + manifests.VariantLabel}
	var out []workloadKey
	ds, err := cs.AppsV1().Deployments(ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list deployments in %s: %w", ns, err)
	}
	for _, d := range ds.Items {
		out = append(out, workloadKey{matrix.KindDeployment, d.Name})
	}
	ss, err := cs.AppsV1().StatefulSets(ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list statefulsets in %s: %w", ns, err)
	}
	for _, s := range ss.Items {
		out = append(out, workloadKey{matrix.KindStatefulSet, s.Name})
	}
	return out, nil
}
