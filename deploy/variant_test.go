package deploy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/pki"
)

func TestVariantObjects(t *testing.T) {
	d, _ := newFake(t, matrix.Cell{Workload: matrix.Deployment, Trust: matrix.Bundle})
	require.NoError(t, d.resolveToken(context.Background()))
	wrong := "wrong-token"
	p, objs, err := d.variantObjects("workers", "bad-bundle", PylonOverrides{
		BootstrapURL:   "stargate.region-a.nvcf.test:50071",
		TrustConfigMap: pki.ConfigMapName(pki.BundleMalformed),
		AuthToken:      &wrong,
		Env:            map[string]string{"EXTRA": "1"},
	})
	require.NoError(t, err)
	require.Equal(t, "pylon-bad-bundle", p.Name)
	require.Len(t, objs, 2)
	s, ok := objs[0].(*corev1.Secret)
	require.True(t, ok)
	require.Equal(t, "pylon-bad-bundle-auth", s.Name)
	require.Equal(t, wrong, string(s.Data[manifests.AuthTokenKey]))
	require.Equal(t, "bad-bundle", s.Labels[manifests.VariantLabel])
	dep, ok := objs[1].(*appsv1.Deployment)
	require.True(t, ok)
	require.Equal(t, "bad-bundle", dep.Labels[manifests.VariantLabel])
	require.Equal(t, "bad-bundle", dep.Spec.Template.Labels[manifests.VariantLabel])
	e := map[string]string{}
	for _, v := range dep.Spec.Template.Spec.Containers[0].Env {
		e[v.Name] = v.Value
	}
	require.Equal(t, "stargate.region-a.nvcf.test:50071", e[manifests.EnvBootstrap])

	// An empty bootstrap address is the variable set to nothing, not left out.
	_, objs, err = d.variantObjects("workers", "empty-bootstrap", PylonOverrides{EmptyBootstrap: true})
	require.NoError(t, err)
	found := false
	for _, v := range objs[len(objs)-1].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env {
		if v.Name == manifests.EnvBootstrap {
			found = true
			require.Empty(t, v.Value)
		}
	}
	require.True(t, found, "%s is set, empty", manifests.EnvBootstrap)
	require.Equal(t, manifests.BundlePath, e[manifests.EnvTLSCertPath])
	require.Equal(t, "1", e["EXTRA"])
	require.Equal(t, "nvcf-transport-trust-bundle-malformed", dep.Spec.Template.Spec.Volumes[0].ConfigMap.Name)

	// The base Pylon's selector does not adopt the variant's pods.
	base := manifests.Selector(manifests.PylonName, manifests.PylonName)
	require.False(t, labels.SelectorFromSet(base).Matches(labels.Set(dep.Spec.Template.Labels)))

	// No token at all.
	none := ""
	_, objs, err = d.variantObjects("workers", "no-token", PylonOverrides{AuthToken: &none})
	require.NoError(t, err)
	require.Len(t, objs, 1)
	for _, v := range objs[0].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env {
		require.NotEqual(t, manifests.EnvAuthTokenFile, v.Name)
	}

	_, err = d.ApplyPylonVariant(context.Background(), "x", PylonOverrides{Cluster: "region-a"})
	require.ErrorContains(t, err, `"region-a" is not a workers cluster`)
	_, _, err = d.variantObjects("workers", "Bad_Name", PylonOverrides{})
	require.ErrorContains(t, err, "DNS label")
}

// Variants survive a re-apply of the cell (pruning leaves them alone) and
// DeletePylonVariant removes them.
func TestVariantSurvivesApplyAndIsDeleted(t *testing.T) {
	ctx := context.Background()
	d, fakes := newFake(t, matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.System})
	w := fakes["workers"]
	p1, objs, err := d.variantObjects("workers", "v1", PylonOverrides{})
	require.NoError(t, err)
	require.Equal(t, "echo-pylon-v1", p1.ServerID(), "a variant registers under its own id, never the base Pylon's")
	for name, p := range plans(t, d) {
		require.NoError(t, d.applyObjects(ctx, fakes[name], p))
	}
	for _, o := range objs {
		require.NoError(t, apply(ctx, w, o))
	}
	for name, p := range plans(t, d) {
		require.NoError(t, d.applyObjects(ctx, fakes[name], p))
	}
	_, err = w.AppsV1().Deployments("nvcf").Get(ctx, "pylon-v1", metav1.GetOptions{})
	require.NoError(t, err, "a re-apply must not prune a variant")

	require.NoError(t, d.DeletePylonVariant(ctx, "v1"))
	_, err = w.AppsV1().Deployments("nvcf").Get(ctx, "pylon-v1", metav1.GetOptions{})
	require.Error(t, err)
	_, err = w.AppsV1().Deployments("nvcf").Get(ctx, "pylon", metav1.GetOptions{})
	require.NoError(t, err, "deleting a variant leaves the base Pylon")
	require.NoError(t, d.DeletePylonVariant(ctx, "v1"), "deleting twice is not an error")
}
