package kubelet

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
)

// volumeSet materialises a pod's volumes under dir/<volume name> and keeps
// the service-account tokens it requested.
type volumeSet struct {
	dir    string
	now    func() time.Time
	tokens map[string]token // key: volume/source index
}

type token struct {
	value           string
	issued, expires time.Time
}

func newVolumeSet(dir string) *volumeSet {
	return &volumeSet{dir: dir, now: time.Now, tokens: map[string]token{}}
}

// sync writes every volume's current content and returns volume name → the
// host directory to mount. A Secret or ConfigMap that is missing (and not
// optional) is an error: the pod waits, as a kubelet's would.
func (v *volumeSet) sync(ctx context.Context, pc *podContext, obj objects) (map[string]string, error) {
	paths := map[string]string{}
	for _, vol := range pc.pod.Spec.Volumes {
		dir := filepath.Join(v.dir, vol.Name)
		var files map[string]file
		var err error
		switch {
		case vol.EmptyDir != nil:
			err = os.MkdirAll(dir, 0o777)
		case vol.HostPath != nil:
			dir = vol.HostPath.Path
		case vol.Secret != nil:
			files, err = secretFiles(ctx, pc, obj, vol.Secret.SecretName, vol.Secret.Items, vol.Secret.DefaultMode, vol.Secret.Optional)
		case vol.ConfigMap != nil:
			files, err = configMapFiles(ctx, pc, obj, vol.ConfigMap.Name, vol.ConfigMap.Items, vol.ConfigMap.DefaultMode, vol.ConfigMap.Optional)
		case vol.DownwardAPI != nil:
			files, err = downwardFiles(pc, vol.DownwardAPI.Items, vol.DownwardAPI.DefaultMode)
		case vol.Projected != nil:
			files, err = v.projectedFiles(ctx, pc, obj, vol.Name, vol.Projected)
		default:
			err = fmt.Errorf("volume type not supported by the process kubelet (secret, configMap, emptyDir, hostPath, downwardAPI and projected are)")
		}
		if err == nil && files != nil {
			_, err = writeAtomic(dir, files)
		}
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		paths[vol.Name] = dir
	}
	return paths, nil
}

func mode(m *int32, def fs.FileMode) fs.FileMode {
	if m != nil {
		return fs.FileMode(*m)
	}
	return def
}

// keyFiles turns data into files, by items when given (each key must
// exist unless optional) or one file per key.
func keyFiles(kind, name string, data map[string][]byte, items []corev1.KeyToPath, defMode *int32, opt bool) (map[string]file, error) {
	files := map[string]file{}
	m := mode(defMode, 0o644)
	if len(items) == 0 {
		for k, v := range data {
			files[k] = file{data: v, mode: m}
		}
		return files, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if opt {
				continue
			}
			return nil, fmt.Errorf("%s %q has no key %q", kind, name, it.Key)
		}
		files[it.Path] = file{data: v, mode: mode(it.Mode, m)}
	}
	return files, nil
}

func secretFiles(ctx context.Context, pc *podContext, obj objects, name string, items []corev1.KeyToPath, defMode *int32, opt *bool) (map[string]file, error) {
	s, err := obj.Secret(ctx, pc.pod.Namespace, name)
	if err != nil {
		if optional(opt) && isNotFound(err) {
			return map[string]file{}, nil
		}
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	return keyFiles("secret", name, s.Data, items, defMode, optional(opt))
}

func configMapFiles(ctx context.Context, pc *podContext, obj objects, name string, items []corev1.KeyToPath, defMode *int32, opt *bool) (map[string]file, error) {
	cm, err := obj.ConfigMap(ctx, pc.pod.Namespace, name)
	if err != nil {
		if optional(opt) && isNotFound(err) {
			return map[string]file{}, nil
		}
		return nil, fmt.Errorf("configMap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles("configMap", name, data, items, defMode, optional(opt))
}

func downwardFiles(pc *podContext, items []corev1.DownwardAPIVolumeFile, defMode *int32) (map[string]file, error) {
	files := map[string]file{}
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			v = formatMap(pc.pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			v = formatMap(pc.pod.Annotations)
		case it.FieldRef != nil:
			v, err = fieldPath(pc, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = resourceField(pc, &pc.pod.Spec.Containers[0], it.ResourceFieldRef)
		}
		if err != nil {
			return nil, fmt.Errorf("downwardAPI %s: %w", it.Path, err)
		}
		files[it.Path] = file{data: []byte(v), mode: mode(it.Mode, mode(defMode, 0o644))}
	}
	return files, nil
}

// formatMap renders labels or annotations as the downward API does: one
// key="value" line per entry, sorted.
func formatMap(m map[string]string) string {
	lines := make([]string, 0, len(m))
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func (v *volumeSet) projectedFiles(ctx context.Context, pc *podContext, obj objects, volName string, p *corev1.ProjectedVolumeSource) (map[string]file, error) {
	files := map[string]file{}
	add := func(fs map[string]file, err error) error {
		for k, f := range fs {
			files[k] = f
		}
		return err
	}
	for i, src := range p.Sources {
		var err error
		switch {
		case src.Secret != nil:
			err = add(secretFiles(ctx, pc, obj, src.Secret.Name, src.Secret.Items, p.DefaultMode, src.Secret.Optional))
		case src.ConfigMap != nil:
			err = add(configMapFiles(ctx, pc, obj, src.ConfigMap.Name, src.ConfigMap.Items, p.DefaultMode, src.ConfigMap.Optional))
		case src.DownwardAPI != nil:
			err = add(downwardFiles(pc, src.DownwardAPI.Items, p.DefaultMode))
		case src.ServiceAccountToken != nil:
			var t string
			t, err = v.token(ctx, pc, obj, fmt.Sprintf("%s/%d", volName, i), src.ServiceAccountToken)
			files[src.ServiceAccountToken.Path] = file{data: []byte(t), mode: mode(p.DefaultMode, 0o644)}
		default:
			err = fmt.Errorf("projected source %d: not supported (secret, configMap, downwardAPI, serviceAccountToken are)", i)
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// token returns a cached token for key, requesting a new one through the
// TokenRequest API when none is cached or 80% of its lifetime has passed
// (the kubelet's rule).
func (v *volumeSet) token(ctx context.Context, pc *podContext, obj objects, key string, src *corev1.ServiceAccountTokenProjection) (string, error) {
	now := v.now()
	if t, ok := v.tokens[key]; ok {
		refresh := t.issued.Add(t.expires.Sub(t.issued) * 8 / 10)
		if now.Before(refresh) && now.Sub(t.issued) < 24*time.Hour {
			return t.value, nil
		}
	}
	exp := int64(3600)
	if src.ExpirationSeconds != nil {
		exp = *src.ExpirationSeconds
	}
	var aud []string
	if src.Audience != "" {
		aud = []string{src.Audience}
	}
	sa := pc.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	st, err := obj.Token(ctx, pc.pod, sa, authnv1.TokenRequestSpec{Audiences: aud, ExpirationSeconds: &exp})
	if err != nil {
		return "", fmt.Errorf("service-account token for %q: %w", sa, err)
	}
	v.tokens[key] = token{value: st.Token, issued: now, expires: st.ExpirationTimestamp.Time}
	return st.Token, nil
}
