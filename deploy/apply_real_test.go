package deploy

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
)

// versions maps "Kind/name" to resourceVersion for the kinds deploy applies.
func versions(t *testing.T, cs kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	add := func(kind string, items []metav1.Object) {
		for _, o := range items {
			out[kind+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	opts := metav1.ListOptions{}
	ds, err := cs.AppsV1().Deployments(ns).List(ctx, opts)
	require.NoError(t, err)
	var l []metav1.Object
	for i := range ds.Items {
		l = append(l, &ds.Items[i])
	}
	add("Deployment", l)
	ss, err := cs.AppsV1().StatefulSets(ns).List(ctx, opts)
	require.NoError(t, err)
	l = nil
	for i := range ss.Items {
		l = append(l, &ss.Items[i])
	}
	add("StatefulSet", l)
	svcs, err := cs.CoreV1().Services(ns).List(ctx, opts)
	require.NoError(t, err)
	l = nil
	for i := range svcs.Items {
		l = append(l, &svcs.Items[i])
	}
	add("Service", l)
	sec, err := cs.CoreV1().Secrets(ns).List(ctx, opts)
	require.NoError(t, err)
	l = nil
	for i := range sec.Items {
		l = append(l, &sec.Items[i])
	}
	add("Secret", l)
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
	require.NoError(t, err)
	l = nil
	for i := range cms.Items {
		if cms.Items[i].Name != "kube-root-ca.crt" {
			l = append(l, &cms.Items[i])
		}
	}
	add("ConfigMap", l)
	return out
}

// changed lists the keys whose version differs or that appeared or left.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k+" (gone)")
		}
	}
	return out
}

// Against a real kube-apiserver (validation, defaulting and server-side
// apply are the real ones; no controllers run): every object of every cell
// is accepted, a re-apply changes nothing, a trust switch changes only the
// Pylon Deployment, a workload switch replaces only the Stargate workload,
// and a variant applies beside the base Pylon.
func TestApplyAgainstRealAPIServer(t *testing.T) {
	cs := realAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, _ := newFake(t, matrix.Cell{Workload: matrix.StatefulSet, Trust: matrix.Bundle})
	d.opts.ClientTLS = true
	require.NoError(t, d.resolveToken(ctx))
	// One API server stands in for every cluster: each gets its own namespace.
	ns := func(cluster string) string { return "nvcf-" + cluster }
	applyAll := func() map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, c := range d.opts.Topology.Clusters {
			d.opts.Namespace = ns(c.Name)
			p, err := d.plan(c)
			require.NoError(t, err)
			require.NoError(t, d.applyObjects(ctx, cs, p), "cluster %s cell %s", c.Name, d.opts.Cell)
			out[c.Name] = versions(t, cs, ns(c.Name))
		}
		return out
	}
	first := applyAll()
	require.Contains(t, first["region-a"], "StatefulSet/stargate")
	require.Contains(t, first["region-b"], "Service/stargate-quic")
	require.Contains(t, first["workers"], "Deployment/pylon")
	require.Contains(t, first["workers"], "Secret/"+manifests.ClientTLSSecret)

	again := applyAll()
	for c := range first {
		require.Empty(t, changed(first[c], again[c]), "re-apply changed objects in %s", c)
	}

	d.opts.Cell.Trust = matrix.GRPCOverride
	trust := applyAll()
	require.Empty(t, changed(again["region-a"], trust["region-a"]))
	require.Empty(t, changed(again["region-b"], trust["region-b"]))
	require.Equal(t, []string{"Deployment/pylon"}, changed(again["workers"], trust["workers"]))

	d.opts.Cell.Workload = matrix.Mixed
	mixed := applyAll()
	require.Empty(t, changed(trust["region-a"], mixed["region-a"]), "region-a stays a StatefulSet in the mixed cell")
	require.ElementsMatch(t, []string{"Deployment/stargate", "StatefulSet/stargate (gone)"}, changed(trust["region-b"], mixed["region-b"]))
	require.Empty(t, changed(trust["workers"], mixed["workers"]))

	d.opts.Namespace = ns("workers")
	_, objs, err := d.variantObjects("workers", "bad-root", PylonOverrides{TrustConfigMap: "nvcf-transport-trust-bundle-malformed"})
	require.NoError(t, err)
	for _, o := range objs {
		require.NoError(t, apply(ctx, cs, o))
	}
	withVariant := applyAll()
	require.Contains(t, withVariant["workers"], "Deployment/pylon-bad-root", "a re-apply must not prune a variant")
	maps.DeleteFunc(withVariant["workers"], func(k, _ string) bool { return k == "Deployment/pylon-bad-root" })
	require.Empty(t, changed(mixed["workers"], withVariant["workers"]))
}
