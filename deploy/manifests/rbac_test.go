package manifests

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/nvcf/conformance/model/matrix"
)

// The clusters enforce RBAC, so what the manifests grant is all a role may
// do: Stargate and the router run as their own ServiceAccounts, bound to a
// Role that lets them watch EndpointSlices in their namespace and nothing
// more; every other workload gets no API token at all.
func TestRBACIsMinimal(t *testing.T) {
	for _, v := range []Values{stargateValues(matrix.KindStatefulSet), stargateValues(matrix.KindDeployment), workerValues(matrix.Bundle)} {
		objs := render(t, v)
		roles := map[string]*rbacv1.Role{}
		bound := map[string]string{} // ServiceAccount → Role
		for _, o := range objs {
			switch r := o.(type) {
			case *rbacv1.Role:
				roles[r.Name] = r
			case *rbacv1.RoleBinding:
				require.Equal(t, "Role", r.RoleRef.Kind, "RoleBinding %s", r.Name)
				for _, s := range r.Subjects {
					require.Equal(t, rbacv1.ServiceAccountKind, s.Kind, "RoleBinding %s", r.Name)
					require.Equal(t, Namespace, s.Namespace, "RoleBinding %s", r.Name)
					bound[s.Name] = r.RoleRef.Name
				}
			}
			_, cluster := o.(*rbacv1.ClusterRoleBinding)
			require.False(t, cluster, "no cluster-wide grants: %s", o.GetName())
		}
		if v.Stargate != nil {
			require.Len(t, roles, 2, "stargate and router")
		}
		for name, r := range roles {
			require.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}}}, r.Rules, "Role %s", name)
		}
		for _, o := range objs {
			spec, ok := podSpecOf(o)
			if !ok {
				continue
			}
			if spec.ServiceAccountName == "" || spec.ServiceAccountName == "default" {
				require.NotNil(t, spec.AutomountServiceAccountToken, "%s mounts the default ServiceAccount's token", o.GetName())
				require.False(t, *spec.AutomountServiceAccountToken, "%s mounts the default ServiceAccount's token", o.GetName())
				continue
			}
			require.NotEmpty(t, bound[spec.ServiceAccountName], "%s runs as %s, which no RoleBinding names", o.GetName(), spec.ServiceAccountName)
		}
	}
}

// podSpecOf is the pod template's spec of a Deployment or StatefulSet.
func podSpecOf(o Object) (corev1.PodSpec, bool) {
	switch w := o.(type) {
	case *appsv1.Deployment:
		return w.Spec.Template.Spec, true
	case *appsv1.StatefulSet:
		return w.Spec.Template.Spec, true
	}
	return corev1.PodSpec{}, false
}
