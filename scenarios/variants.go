package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/wire/reason"
)

// PylonVariant is a Pylon deployed beside the base one for one case, with
// one deliberately changed ingredient (deploy's overrides).
type PylonVariant struct {
	// Name is the variant's name (a DNS label); the Deployment is "pylon-<name>".
	Name string
	// Overrides change the cell's base Pylon.
	Overrides deploy.PylonOverrides
}

// WithPylon deploys the variant in the workers cluster, runs fn with the
// deployed variant, and deletes the variant again, whatever fn returned.
// A failure to deploy or to delete it is a step's failure (the case is an
// Error): a variant left behind would break the next case.
func (e *Env) WithPylon(ctx context.Context, v PylonVariant, fn func(ctx context.Context, dv *deploy.Variant) error) (err error) {
	e.Progress.Note("rolling out Pylon variant %s and waiting for its pod", v.Name)
	dv, err := e.deployer.ApplyPylonVariant(ctx, v.Name, v.Overrides)
	if err != nil {
		return stepFailed(fmt.Sprintf("deploy pylon variant %q", v.Name), err)
	}
	e.Log.Info("pylon variant deployed", "name", dv.Deployment)
	defer func() {
		e.keepVariant(ctx, dv.Cluster, v.Name, dv.Selector)
		cctx := context.WithoutCancel(ctx)
		derr := e.deployer.DeletePylonVariant(cctx, v.Name)
		err = withCleanup(err, fmt.Sprintf("delete pylon variant %q", v.Name), derr)
		if derr == nil {
			err = withCleanup(err, fmt.Sprintf("wait until no Stargate holds pylon variant %q's %s", v.Name, dv.InferenceServerID), e.awaitReleased(cctx, dv.InferenceServerID))
		}
	}()
	return fn(ctx, dv)
}

// awaitReleased waits until no Stargate replica holds a registration or a
// reverse tunnel of id. A variant's id is the same in every cell and in a
// case's control twin, and a tunnel whose Pylon vanished without closing
// it lives on until Stargate's idle timeout: left over, it would be
// counted against the next case that deploys the same variant.
func (e *Env) awaitReleased(ctx context.Context, id string) error {
	if byMetrics(e.Config) {
		// A real Stargate names no ids; nothing to wait on.
		e.Log.Info("cannot see on a real Stargate whether it still holds "+id+"; not waiting", "proof", ProofNone)
		return nil
	}
	return e.Eventually(ctx, "no Stargate to hold "+id, waitConverge, func(ctx context.Context) error {
		hs, err := e.askStargates(ctx)
		if err != nil {
			return err
		}
		var held []string
		for _, h := range hs {
			if slices.Contains(h.Registrations, id) || slices.Contains(h.Tunnels, id) {
				held = append(held, h.name())
			}
		}
		if len(held) > 0 {
			return fmt.Errorf("%s still held by %s", id, strings.Join(held, ", "))
		}
		return nil
	})
}

// PylonOutcome waits until the Pylon called name either holds a healthy
// registration with some Stargate (nil) or refuses for a non-transient
// reason: reported in its /status, or, when the process refused to start
// at all, named in its container's termination message. At the deadline
// it returns the last transient reason seen, or reason.Timeout.
func (e *Env) PylonOutcome(ctx context.Context, name string, d time.Duration) error {
	var last, decided error
	err := e.Eventually(ctx, "pylon "+name+" to register or refuse", d, func(ctx context.Context) error {
		doc, err := e.PylonStatus(ctx, name)
		if err != nil {
			if exit := e.pylonExit(ctx, name); exit != nil {
				decided = exit
				return nil
			}
			last = err
			return err
		}
		if f := doc.Failure(reason.OriginPylon); f != nil {
			decided = fmt.Errorf("pylon %s refused: %w", name, f)
			return nil
		}
		for _, suffix := range e.IdentitySuffixes() {
			if slices.ContainsFunc(doc.Entries(suffix), Healthy) {
				decided = nil
				return nil
			}
		}
		rs := doc.Reasons()
		last = fmt.Errorf("pylon %s neither registered nor refused yet (reasons %v): %s", name, rs, doc)
		if len(rs) > 0 {
			last = reason.Wrap(rs[0], last)
		}
		return last
	})
	if err == nil {
		return decided
	}
	if r := reason.Of(last); r == reason.Unknown || r == reason.None {
		return reason.Wrap(reason.Timeout, err)
	}
	return fmt.Errorf("%w (%w)", last, err)
}

// pylonExit reports a Pylon container that ended (or ended before its
// current restart) with a non-zero code: a refusal to start. The reason and
// origin are those of its termination message (terminated), else
// reason.Unknown.
func (e *Env) pylonExit(ctx context.Context, name string) error {
	cs, err := e.Kube(e.Workers())
	if err != nil {
		return nil
	}
	pods, err := cs.CoreV1().Pods(e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: manifests.InstanceLabel + "=" + name})
	if err != nil {
		return nil
	}
	for _, p := range pods.Items {
		for _, st := range p.Status.ContainerStatuses {
			if st.Name != manifests.PylonName {
				continue
			}
			for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
				if t == nil || t.ExitCode == 0 {
					continue
				}
				return terminated(t, fmt.Sprintf("pylon %s (pod %s) exited with code %d after %d restarts, before serving /status", name, p.Name, t.ExitCode, st.RestartCount))
			}
		}
	}
	return nil
}

// IdentitySuffixes are what every Stargate identity of each region ends
// with (the identity template after "{pod_name}"), so a status entry about
// any replica, old or new, is found by it.
func (e *Env) IdentitySuffixes() []string {
	var out []string
	for _, r := range e.Regions() {
		out = append(out, e.Identity(r, ""))
	}
	return out
}

// WithIngressCert points a region's TLS ingress at the server credential
// of purpose p (pki.ServerWrongRoot, say), waits for the rollout, runs fn,
// and restores the good credential (waiting again) whatever fn returned.
func (e *Env) WithIngressCert(ctx context.Context, region string, p pki.Purpose, fn func(ctx context.Context) error) (err error) {
	if err := e.setIngressSecret(ctx, region, pki.SecretName(pki.RoleGRPC, p)); err != nil {
		return stepFailed(fmt.Sprintf("point the ingress of %s at the %s certificate", region, p), err)
	}
	e.NoteFault(fmt.Sprintf("ingress of %s serves the %s certificate", region, p))
	defer func() {
		err = withCleanup(err, "restore the good ingress certificate of "+region,
			e.setIngressSecret(context.WithoutCancel(ctx), region, manifests.IngressTLSSecret))
	}()
	return fn(ctx)
}

func (e *Env) setIngressSecret(ctx context.Context, region, secret string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	api := cs.AppsV1().Deployments(e.Deployed.Namespace)
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"volumes":[{"name":"ingress-tls","secret":{"secretName":%q}}]}}}}`, secret)
	if _, err := api.Patch(ctx, manifests.IngressName, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "nvcf-harness-scenarios"}); err != nil {
		return fmt.Errorf("point the ingress of %s at secret %s: %w", region, secret, err)
	}
	return e.Eventually(ctx, "ingress of "+region+" rolled out with "+secret, 2*time.Minute, func(ctx context.Context) error {
		d, err := api.Get(ctx, manifests.IngressName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		s := d.Status
		if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
			return fmt.Errorf("rollout in progress: generation %d/%d, updated %d, available %d, total %d of %d",
				s.ObservedGeneration, d.Generation, s.UpdatedReplicas, s.AvailableReplicas, s.Replicas, want)
		}
		return nil
	})
}
