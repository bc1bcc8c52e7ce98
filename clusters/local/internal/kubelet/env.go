package kubelet

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// objects is how pod translation reads the API objects a pod refers to.
// The kubelet reads them from the apiserver; tests give fixed data.
type objects interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Token requests a service-account token bound to the pod.
	Token(ctx context.Context, pod *corev1.Pod, sa string, req authnv1.TokenRequestSpec) (*authnv1.TokenRequestStatus, error)
}

// podContext is what translation knows about a pod beyond its manifest.
type podContext struct {
	pod       *corev1.Pod
	podIP     netip.Addr
	hostIP    netip.Addr
	apiServer netip.AddrPort
	hostname  string
	// capacity answers resourceFieldRef for unset limits (the node's).
	capacity corev1.ResourceList
}

// containerEnv computes a container's environment as Kubernetes does:
// the service variables (KUBERNETES_SERVICE_*), then envFrom sources in
// order, then env entries (later wins), each env value $(VAR)-expanded
// against what was defined before it. It returns the variables sorted by
// name, plus PATH and HOSTNAME defaults a container runtime would set.
func containerEnv(ctx context.Context, pc *podContext, c *corev1.Container, obj objects) (map[string]string, error) {
	pod := pc.pod
	env := map[string]string{
		"PATH":     "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOSTNAME": pc.hostname,
		"HOME":     "/root",
	}
	if pc.apiServer.IsValid() {
		host, port := pc.apiServer.Addr().String(), strconv.Itoa(int(pc.apiServer.Port()))
		env["KUBERNETES_SERVICE_HOST"] = host
		env["KUBERNETES_SERVICE_PORT"] = port
		env["KUBERNETES_SERVICE_PORT_HTTPS"] = port
		env["KUBERNETES_PORT"] = "tcp://" + pc.apiServer.String()
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := obj.ConfigMap(ctx, pod.Namespace, from.ConfigMapRef.Name)
			if err != nil {
				if optional(from.ConfigMapRef.Optional) && isNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("envFrom configMap %q: %w", from.ConfigMapRef.Name, err)
			}
			for k, v := range cm.Data {
				env[from.Prefix+k] = v
			}
		case from.SecretRef != nil:
			s, err := obj.Secret(ctx, pod.Namespace, from.SecretRef.Name)
			if err != nil {
				if optional(from.SecretRef.Optional) && isNotFound(err) {
					continue
				}
				return nil, fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
			}
			for k, v := range s.Data {
				env[from.Prefix+k] = string(v)
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = expand(e.Value, func(n string) (string, bool) { v, ok := env[n]; return v, ok })
			continue
		}
		v, skip, err := envValueFrom(ctx, pc, c, e.ValueFrom, obj)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if !skip {
			env[e.Name] = v
		}
	}
	return env, nil
}

// envList renders env as sorted KEY=VALUE strings.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// envValueFrom resolves one valueFrom; skip is true for a missing optional key.
func envValueFrom(ctx context.Context, pc *podContext, c *corev1.Container, vf *corev1.EnvVarSource, obj objects) (value string, skip bool, err error) {
	pod := pc.pod
	switch {
	case vf.FieldRef != nil:
		v, err := fieldPath(pc, vf.FieldRef.FieldPath)
		return v, false, err
	case vf.ResourceFieldRef != nil:
		v, err := resourceField(pc, c, vf.ResourceFieldRef)
		return v, false, err
	case vf.ConfigMapKeyRef != nil:
		ref := vf.ConfigMapKeyRef
		cm, err := obj.ConfigMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional(ref.Optional) && isNotFound(err) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("configMap %q: %w", ref.Name, err)
		}
		if v, ok := cm.Data[ref.Key]; ok {
			return v, false, nil
		}
		if optional(ref.Optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("configMap %q has no key %q", ref.Name, ref.Key)
	case vf.SecretKeyRef != nil:
		ref := vf.SecretKeyRef
		s, err := obj.Secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional(ref.Optional) && isNotFound(err) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		if v, ok := s.Data[ref.Key]; ok {
			return string(v), false, nil
		}
		if optional(ref.Optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("secret %q has no key %q", ref.Name, ref.Key)
	}
	return "", false, fmt.Errorf("unsupported valueFrom (fieldRef, resourceFieldRef, configMapKeyRef and secretKeyRef are)")
}

// fieldPath answers a downward-API field path.
func fieldPath(pc *podContext, path string) (string, error) {
	pod := pc.pod
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return pc.podIP.String(), nil
	case "status.hostIP", "status.hostIPs":
		return pc.hostIP.String(), nil
	}
	return "", fmt.Errorf("unsupported fieldRef.fieldPath %q", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// resourceField answers a resourceFieldRef from the container's resources,
// falling back to the node capacity for unset limits.
func resourceField(pc *podContext, c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		for i := range pc.pod.Spec.Containers {
			if pc.pod.Spec.Containers[i].Name == ref.ContainerName {
				c = &pc.pod.Spec.Containers[i]
			}
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("resourceFieldRef %q: want limits.<name> or requests.<name>", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		if q, ok = pc.capacity[corev1.ResourceName(name)]; !ok && kind == "limits" {
			return "", fmt.Errorf("resourceFieldRef %q: unknown resource", ref.Resource)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == "cpu" {
		return strconv.FormatInt((q.MilliValue()+divisor.MilliValue()-1)/divisor.MilliValue(), 10), nil
	}
	return strconv.FormatInt((q.Value()+divisor.Value()-1)/divisor.Value(), 10), nil
}

func optional(b *bool) bool { return b != nil && *b }
