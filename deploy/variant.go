package deploy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
)

// PylonOverrides make a Pylon variant differ from the cell's base Pylon.
// Zero fields keep the base Pylon's setting.
type PylonOverrides struct {
	// Cluster is the workers cluster to deploy in (default: the first).
	Cluster string
	// BootstrapURL replaces the bootstrap address; it is not validated, so
	// it may be bad on purpose (http://, scheme-less, an unknown host).
	BootstrapURL string
	// EmptyBootstrap sets the bootstrap address to the empty string (the
	// variable present, with no value, so that the nvcf flavor's
	// --stargate-address=$(LLM_REQUEST_ROUTER_ADDRESS) is empty too; a
	// variable left out would leave that reference unexpanded).
	EmptyBootstrap bool
	// Trust replaces the trust source.
	Trust matrix.Trust
	// TrustConfigMap mounts another merged-bundle ConfigMap, e.g.
	// pki.ConfigMapName(pki.BundleMalformed) or one the scenario made.
	TrustConfigMap string
	// CustomTrustConfigMap mounts another custom-roots ConfigMap.
	CustomTrustConfigMap string
	// AuthToken: nil keeps the deployment's token; a pointer to "" sends
	// none; any other value is sent instead (its own Secret is created).
	AuthToken *string
	// ClientTLSSecret: nil keeps the base setting; a pointer to "" mounts
	// no client certificate; else the named kubernetes.io/tls Secret, e.g.
	// pki.SecretName(pki.RoleClient, pki.ClientExpired).
	ClientTLSSecret *string
	// Env adds or replaces environment variables; an empty value removes one.
	Env map[string]string
	// WaitReady waits for the variant to be available. Leave it false for
	// a variant expected to fail closed: Apply then waits only until its
	// pod exists.
	WaitReady bool
}

// Variant is a deployed Pylon variant.
type Variant struct {
	Name       string
	Cluster    string
	Deployment string
	// InferenceServerID is the id the variant registers, which no Stargate
	// may hold when the variant is expected to fail closed.
	InferenceServerID string
	// Selector selects the variant's pods.
	Selector string
	// Pods are the variant's current pods.
	Pods []string
}

// ApplyPylonVariant deploys (or updates) a second Pylon Deployment,
// "pylon-<name>", beside the base one, changed by o. Its pods carry the
// VariantLabel, so neither the base Pylon nor Apply's pruning touches them;
// delete it with DeletePylonVariant.
func (d *Deployer) ApplyPylonVariant(ctx context.Context, name string, o PylonOverrides) (*Variant, error) {
	cluster := o.Cluster
	if cluster == "" {
		w := d.opts.Topology.ByRole(topology.RoleWorkers)
		if len(w) == 0 {
			return nil, fmt.Errorf("pylon variant %q: topology %q has no workers cluster", name, d.opts.Topology.Name)
		}
		cluster = w[0].Name
	}
	if c, ok := d.opts.Topology.Cluster(cluster); !ok || c.Role != topology.RoleWorkers {
		return nil, fmt.Errorf("pylon variant %q: %q is not a workers cluster of topology %q", name, cluster, d.opts.Topology.Name)
	}
	if err := d.resolveToken(ctx); err != nil {
		return nil, err
	}
	p, objs, err := d.variantObjects(cluster, name, o)
	if err != nil {
		return nil, err
	}
	cs, err := d.client(cluster)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if err := apply(ctx, cs, obj); err != nil {
			return nil, fmt.Errorf("pylon variant %q in cluster %q: %w", name, cluster, err)
		}
	}
	v := &Variant{Name: name, Cluster: cluster, Deployment: p.Name, InferenceServerID: p.ServerID(),
		Selector: labels.SelectorFromSet(manifests.Selector(manifests.PylonName, p.Name)).String()}
	wctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	ns := d.opts.Namespace
	if o.WaitReady {
		err = waitFor(wctx, "pylon variant "+ns+"/"+p.Name+" available", deploymentReady(cs, ns, p.Name))
	} else {
		err = waitFor(wctx, "a pod of pylon variant "+ns+"/"+p.Name, variantStarted(cs, ns, p.Name))
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster, err)
	}
	if v.Pods, err = d.PodNames(ctx, cluster, v.Selector); err != nil {
		return nil, err
	}
	return v, nil
}

// variantObjects renders a variant: its Pylon values and the objects to
// apply (its own auth Secret, if any, then the Deployment).
func (d *Deployer) variantObjects(cluster, name string, o PylonOverrides) (manifests.Pylon, []manifests.Object, error) {
	p, err := d.basePylon()
	if err != nil {
		return p, nil, err
	}
	p.Name, p.Variant = manifests.PylonName+"-"+name, name
	if o.BootstrapURL != "" {
		p.BootstrapURL = o.BootstrapURL
	}
	if o.EmptyBootstrap {
		p.BootstrapURL = ""
	}
	if o.Trust != "" {
		p.Trust = o.Trust
	}
	p.TrustConfigMap, p.CustomTrustConfigMap = o.TrustConfigMap, o.CustomTrustConfigMap
	if o.ClientTLSSecret != nil {
		p.ClientTLSSecret = *o.ClientTLSSecret
	}
	p.Env = o.Env
	var out []manifests.Object
	if o.AuthToken != nil {
		p.AuthSecret = ""
		if *o.AuthToken != "" {
			s := d.authSecret(p.Name+"-auth", *o.AuthToken)
			s.Labels[manifests.VariantLabel] = name
			out = append(out, s)
			p.AuthSecret = s.Name
		}
	}
	objs, err := manifests.Render(manifests.Values{
		Namespace: d.opts.Namespace, Cluster: cluster, Profile: string(d.opts.Cell.Profile),
		Images: d.opts.Images, Flavor: d.opts.Flavor, Build: d.opts.Build, Worker: &manifests.Worker{Pylons: []manifests.Pylon{p}}, Defect: d.opts.Defect,
	})
	if err != nil {
		return p, nil, fmt.Errorf("pylon variant %q: %w", name, err)
	}
	// Leave out the namespace: the variant lives in the deployed one.
	for _, obj := range objs {
		if obj.GetNamespace() != "" {
			out = append(out, obj)
		}
	}
	return p, out, nil
}

// variantStarted: the controller saw the latest spec and a pod of it exists
// (its containers may be failing, as a fail-closed variant's should).
func variantStarted(cs kubernetes.Interface, ns, name string) check {
	return func(ctx context.Context) (bool, status, error) {
		dep, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, status{}, err
		}
		st := dep.Status
		state := says("generation %d observed %d, %d updated", dep.Generation, st.ObservedGeneration, st.UpdatedReplicas)
		if st.ObservedGeneration < dep.Generation || st.UpdatedReplicas < 1 {
			return false, state, nil
		}
		pods, err := listPods(ctx, cs, ns, dep.Spec.Selector)
		if err != nil {
			return false, status{}, err
		}
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				return true, state, nil
			}
		}
		return false, state.withPods(cs, ns, dep.Spec.Selector), nil
	}
}

// DeletePylonVariant deletes the variant's Deployment and Secret in every
// workers cluster and waits until its pods are gone. Deleting a variant
// that does not exist is not an error.
func (d *Deployer) DeletePylonVariant(ctx context.Context, name string) error {
	var errs []error
	dep := manifests.PylonName + "-" + name
	for _, c := range d.opts.Topology.ByRole(topology.RoleWorkers) {
		cs, err := d.client(c.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ns := d.opts.Namespace
		if err := deleteWorkload(ctx, cs, ns, workloadKey{matrix.KindDeployment, dep}); err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", c.Name, err))
			continue
		}
		if err := cs.CoreV1().Secrets(ns).Delete(ctx, dep+"-auth", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cluster %q: delete secret %s/%s-auth: %w", c.Name, ns, dep, err))
		}
		sel := labels.SelectorFromSet(manifests.Selector(manifests.PylonName, dep))
		wctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
		err = waitFor(wctx, "pods of pylon variant "+ns+"/"+dep+" gone", func(ctx context.Context) (bool, status, error) {
			pods, err := listPodsBy(ctx, cs, ns, sel)
			if err != nil {
				return false, status{}, err
			}
			return len(pods) == 0, says("%d pods left", len(pods)), nil
		})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}
