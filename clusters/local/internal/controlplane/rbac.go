package controlplane

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The users of the two components the API server's bootstrap policy does
// not know: CoreDNS and the agent's load-balancer controller run on the
// host, outside any pod, so they authenticate with client certificates
// rather than service accounts.
const (
	CoreDNSUser = "nvcf-harness:coredns"
	LBUser      = "nvcf-harness:load-balancer-controller"
)

// clusterRoles grant CoreDNS and the load-balancer controller what they
// read and write, and nothing else. CoreDNS's rules are the ones a kubeadm
// cluster gives its system:coredns role.
var clusterRoles = map[string][]rbacv1.PolicyRule{
	CoreDNSUser: {
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	},
	LBUser: {
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"services/status"}, Verbs: []string{"update", "patch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	},
}

// ensureRBAC creates (or brings up to date) a ClusterRole and a
// ClusterRoleBinding to the user of the same name for each entry of
// clusterRoles, as the admin of kubeconfig.
func ensureRBAC(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("rbac: kubeconfig %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	for name, rules := range clusterRoles {
		meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "nvcf-harness"}}
		role := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			_, err = cs.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("rbac: update ClusterRole %s: %w", name, err)
			}
		} else if err != nil {
			return fmt.Errorf("rbac: create ClusterRole %s: %w", name, err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("rbac: create ClusterRoleBinding %s: %w", name, err)
		}
	}
	return nil
}
