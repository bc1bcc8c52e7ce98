package kubelet

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fixedObjects is a set of ConfigMaps and Secrets given by a test, and a
// token issuer that counts its tokens.
type fixedObjects struct {
	cms     map[string]*corev1.ConfigMap
	secrets map[string]*corev1.Secret
	tokens  int
}

func (f *fixedObjects) ConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.cms[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fixedObjects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f *fixedObjects) Token(_ context.Context, pod *corev1.Pod, sa string, spec authnv1.TokenRequestSpec) (*authnv1.TokenRequestStatus, error) {
	f.tokens++
	return &authnv1.TokenRequestStatus{
		Token:               "token-" + sa + "-" + pod.Name + "-" + string(rune('0'+f.tokens)),
		ExpirationTimestamp: metav1.NewTime(time.Now().Add(time.Duration(*spec.ExpirationSeconds) * time.Second)),
	}, nil
}

func testObjects() *fixedObjects {
	return &fixedObjects{
		cms: map[string]*corev1.ConfigMap{
			"nvcf/trust":            {Data: map[string]string{"nvcf-ca-bundle.pem": "BUNDLE", "mode": "strict"}},
			"nvcf/kube-root-ca.crt": {Data: map[string]string{"ca.crt": "CLUSTER-CA"}},
		},
		secrets: map[string]*corev1.Secret{
			"nvcf/tls": {Data: map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY"), "token": []byte("s3cret")}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sg-0", Namespace: "nvcf", UID: "0123abcd-9999",
			Labels: map[string]string{"app": "stargate"}},
		Spec: corev1.PodSpec{
			NodeName: "region-a-node-0", ServiceAccountName: "stargate", Hostname: "sg-0", Subdomain: "stargate-headless",
			Containers: []corev1.Container{{
				Name: "stargate", Image: "registry.local/nvcf-ref:dev",
				Command: []string{"/nvcf-ref", "stargate"},
				Args:    []string{"--id=$(POD_NAME)", "--advertise=$(POD_IP):50071", "--literal=$$(POD_NAME)", "--unknown=$(NOPE)"},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
					{Name: "ADDR", Value: "$(POD_NAME).$(POD_NAMESPACE):$(PORT)"},
					{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "trust"}, Key: "mode"}}},
					{Name: "AUTH", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}, Key: "token"}}},
					{Name: "OPT", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Key: "x", Optional: ptr(true)}}},
					{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
				},
				EnvFrom:   []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "trust"}}}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "tls", MountPath: "/etc/nvcf/tls/ingress", ReadOnly: true},
					{Name: "trust", MountPath: "/etc/nvcf/trust/", ReadOnly: true},
					{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					{Name: "scratch", MountPath: "/data", SubPath: "sub"},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls",
					Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "tls.crt"}, {Key: "tls.key", Path: "tls.key", Mode: ptr(int32(0o600))}}}}},
				{Name: "trust", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "trust"}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
				}}}},
			},
		},
	}
}

func testBinary(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "nvcf-ref")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	return bin
}

func TestManifestToProcess(t *testing.T) {
	ctx := context.Background()
	bin := testBinary(t)
	pod := testPod()
	pc := &podContext{pod: pod, podIP: netip.MustParseAddr("198.18.10.7"), hostIP: netip.MustParseAddr("198.18.10.1"),
		apiServer: netip.MustParseAddrPort("198.18.10.1:6443"), hostname: podHostname(pod)}
	obj := testObjects()
	vs := newVolumeSet(t.TempDir())
	vols, err := vs.sync(ctx, pc, obj)
	require.NoError(t, err)

	l, err := buildLaunch(ctx, pc, &pod.Spec.Containers[0], map[string]string{"nvcf-ref": bin}, vols, "/scratch", obj)
	require.NoError(t, err)
	require.Equal(t, []string{bin, "stargate", "--id=sg-0", "--advertise=198.18.10.7:50071", "--literal=$(POD_NAME)", "--unknown=$(NOPE)"}, l.Argv,
		"command[0] is the image's binary; args are $(VAR)-expanded, $$ escapes, unknown references stay")
	require.Equal(t, "sg-0", l.Hostname)
	env := map[string]string{}
	for _, kv := range l.Env {
		k, v, _ := cut(kv)
		env[k] = v
	}
	for k, want := range map[string]string{
		"POD_NAME": "sg-0", "POD_NAMESPACE": "nvcf", "POD_IP": "198.18.10.7", "NODE": "region-a-node-0", "APP": "stargate",
		"ADDR": "sg-0.nvcf:$(PORT)", "MODE": "strict", "AUTH": "s3cret", "MEM": "256",
		"CFG_nvcf-ca-bundle.pem": "BUNDLE", "CFG_mode": "strict",
		"KUBERNETES_SERVICE_HOST": "198.18.10.1", "KUBERNETES_SERVICE_PORT": "6443", "HOSTNAME": "sg-0",
	} {
		require.Equal(t, want, env[k], k)
	}
	require.NotContains(t, env, "OPT", "a missing optional secret leaves the variable unset")

	require.Equal(t, []mount{
		{Source: vols["tls"], Target: "/etc/nvcf/tls/ingress", ReadOnly: true},
		{Source: vols["trust"], Target: "/etc/nvcf/trust", ReadOnly: true},
		{Source: vols["kube-api-access"], Target: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
		{Source: filepath.Join(vols["scratch"], "sub"), Target: "/data"},
	}, l.Mounts)

	read := func(vol, name string) string {
		b, err := os.ReadFile(filepath.Join(vols[vol], name))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, "CERT", read("tls", "tls.crt"))
	st, err := os.Stat(filepath.Join(vols["tls"], "tls.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Equal(t, "BUNDLE", read("trust", "nvcf-ca-bundle.pem"))
	require.Equal(t, "token-stargate-sg-0-1", read("kube-api-access", "token"))
	require.Equal(t, "CLUSTER-CA", read("kube-api-access", "ca.crt"))
	require.Equal(t, "nvcf", read("kube-api-access", "namespace"))

	// A resync keeps the token (far from expiry) and shows a rotated secret.
	obj.secrets["nvcf/tls"].Data["tls.crt"] = []byte("CERT-2")
	_, err = vs.sync(ctx, pc, obj)
	require.NoError(t, err)
	require.Equal(t, "CERT-2", read("tls", "tls.crt"))
	require.Equal(t, 1, obj.tokens)
	vs.now = func() time.Time { return time.Now().Add(50 * time.Minute) } // past 80% of 3607 s
	_, err = vs.sync(ctx, pc, obj)
	require.NoError(t, err)
	require.Equal(t, "token-stargate-sg-0-2", read("kube-api-access", "token"))
}

func cut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

func TestMissingObjectsAndImages(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	pc := &podContext{pod: pod, podIP: netip.MustParseAddr("198.18.10.7")}
	obj := testObjects()
	delete(obj.secrets, "nvcf/tls")
	_, err := newVolumeSet(t.TempDir()).sync(ctx, pc, obj)
	require.ErrorContains(t, err, `volume "tls": secret "tls"`)

	_, err = buildLaunch(ctx, pc, &pod.Spec.Containers[0], map[string]string{"other": "/bin/true"}, nil, "/", testObjects())
	require.ErrorContains(t, err, `image "registry.local/nvcf-ref:dev" is not mapped`)

	bin := testBinary(t)
	for _, ref := range []string{"nvcf-ref:dev", "nvcf-ref", "example.com:5000/team/nvcf-ref:v2", "nvcf-ref@sha256:abc"} {
		got, err := resolveImage(map[string]string{"nvcf-ref": bin}, ref)
		require.NoError(t, err, ref)
		require.Equal(t, bin, got)
	}
	_, err = resolveImage(map[string]string{"nvcf-ref": "/does/not/exist"}, "nvcf-ref:dev")
	require.ErrorContains(t, err, "not a binary")
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"plain":         "plain",
		"$(A)":          "1",
		"x$(A)y$(B)z":   "x1ytwoz",
		"$$(A)":         "$(A)",
		"$$$(A)":        "$1",
		"$(C)":          "$(C)",
		"$(A":           "$(A",
		"cost $5":       "cost $5",
		"end$":          "end$",
		"$(A)$(A)":      "11",
		"nested $((A))": "nested $((A))",
	} {
		require.Equal(t, want, expand(in, lookup), in)
	}
}

func TestResolvConfAndHosts(t *testing.T) {
	pod := testPod()
	require.Equal(t, "nameserver 198.18.10.1\nsearch nvcf.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n",
		resolvConf(pod, netip.MustParseAddr("198.18.10.1"), "cluster.local"))
	require.Contains(t, hostsFile(pod, netip.MustParseAddr("198.18.10.7"), "cluster.local"),
		"198.18.10.7\tsg-0.stargate-headless.nvcf.svc.cluster.local\tsg-0\n")
	pod.Spec.Hostname, pod.Spec.Subdomain = "", ""
	pod.Name = "router-5d8f-abcde"
	require.Contains(t, hostsFile(pod, netip.MustParseAddr("198.18.10.8"), "cluster.local"), "198.18.10.8\trouter-5d8f-abcde\n")
}

func mustAddr(t *testing.T, s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	require.NoError(t, err)
	return a
}
