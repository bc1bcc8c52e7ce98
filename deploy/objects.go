package deploy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
)

// pkiObjects are the PKI Secrets of the cluster (its server or client
// credentials, good and bad) and every trust bundle ConfigMap, placed in
// the namespace.
func (d *Deployer) pkiObjects(c topology.Cluster) ([]manifests.Object, error) {
	secrets, err := d.opts.PKI.Secrets(c.Name)
	if err != nil {
		return nil, fmt.Errorf("pki secrets of cluster %q: %w", c.Name, err)
	}
	cms, err := d.opts.PKI.ConfigMaps()
	if err != nil {
		return nil, fmt.Errorf("pki configmaps: %w", err)
	}
	var out []manifests.Object
	for i := range cms {
		cm := cms[i]
		cm.Namespace = d.opts.Namespace
		out = append(out, &cm)
	}
	for i := range secrets {
		s := secrets[i]
		s.Namespace = d.opts.Namespace
		out = append(out, &s)
	}
	return out, nil
}

// authSecret is the reverse-tunnel token Secret, the same in every cluster.
func (d *Deployer) authSecret(name, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: d.opts.Namespace,
			Labels:    manifests.Labels(manifests.PylonName, name),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{manifests.AuthTokenKey: []byte(token)},
	}
}

// resolveToken fixes the auth token once: the option, else the token of an
// existing Secret in any cluster (so a re-apply keeps it), else a new one.
func (d *Deployer) resolveToken(ctx context.Context) error {
	d.tokenMu.Lock()
	defer d.tokenMu.Unlock()
	if d.token != "" {
		return nil
	}
	if d.opts.AuthToken != "" {
		d.token = d.opts.AuthToken
		return nil
	}
	for _, c := range d.opts.Topology.Clusters {
		cs, err := d.client(c.Name)
		if err != nil {
			return err
		}
		s, err := cs.CoreV1().Secrets(d.opts.Namespace).Get(ctx, manifests.AuthSecret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read secret %s/%s in cluster %q: %w", d.opts.Namespace, manifests.AuthSecret, c.Name, err)
		}
		if t := string(s.Data[manifests.AuthTokenKey]); t != "" {
			d.token = t
			return nil
		}
	}
	t, err := randomToken()
	if err != nil {
		return err
	}
	d.token = t
	return nil
}
