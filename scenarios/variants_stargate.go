package scenarios

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/fixtures/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/wire/reason"
)

// remoteURLFlag is the Stargate flag naming a remote region's watch URL.
const remoteURLFlag = "--remote-stargate-url="

// WithStargate starts, in region, a lone Stargate pod built from the
// region's Stargate pod template with its remote watch URLs replaced by
// remoteURLs and labels that keep it out of every Service, runs fn with
// the pod's name, and deletes the pod whatever fn returned. A failure to
// start or delete the pod is a step's failure (the case is an Error).
func (e *Env) WithStargate(ctx context.Context, region, variant string, remoteURLs []string, fn func(ctx context.Context, pod string) error) (err error) {
	cs, err := e.Kube(region)
	if err != nil {
		return stepFailed("reach region "+region, err)
	}
	ns := e.Deployed.Namespace
	tmpl, err := e.stargateTemplate(ctx, region)
	if err != nil {
		return stepFailed("read the Stargate pod template", err)
	}
	name := "stargate-variant-" + variant
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			manifests.NameLabel: "stargate-variant", manifests.InstanceLabel: name,
			manifests.ManagedByLabel: manifests.ManagedBy, manifests.VariantLabel: variant,
		}},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	c := &pod.Spec.Containers[0]
	var args []string
	for _, a := range c.Args {
		if !strings.HasPrefix(a, remoteURLFlag) {
			args = append(args, a)
		}
	}
	for _, u := range remoteURLs {
		args = append(args, remoteURLFlag+u)
	}
	c.Args = args
	c.ReadinessProbe = nil
	// A refusal at start-up ends the process: its last words become the
	// container's termination message, which the API reports.
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	api := cs.CoreV1().Pods(ns)
	del := func(ctx context.Context) error {
		zero := int64(0)
		err := api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err := del(ctx); err != nil {
		return stepFailed("delete an old Stargate variant "+name, err)
	}
	if err := e.Eventually(ctx, "old pod "+name+" gone", time.Minute, func(ctx context.Context) error {
		if _, err := api.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod %s still exists (%v)", name, err)
		}
		return nil
	}); err != nil {
		return stepFailed("wait for an old Stargate variant to go", err)
	}
	if _, err := api.Create(ctx, pod, metav1.CreateOptions{FieldManager: "nvcf-harness-scenarios"}); err != nil {
		return stepFailed(fmt.Sprintf("create Stargate variant %s in %s", name, region), err)
	}
	defer func() {
		e.keepVariant(ctx, region, variant, manifests.InstanceLabel+"="+name)
		err = withCleanup(err, "delete Stargate variant "+name, del(context.WithoutCancel(ctx)))
	}()
	return fn(ctx, name)
}

// stargateTemplate reads the pod template of a region's Stargate workload,
// whichever kind the cell deployed.
func (e *Env) stargateTemplate(ctx context.Context, region string) (*corev1.PodTemplateSpec, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return nil, err
	}
	ns := e.Deployed.Namespace
	if sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, manifests.StargateName, metav1.GetOptions{}); err == nil {
		return &sts.Spec.Template, nil
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, manifests.StargateName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("region %s: no Stargate StatefulSet or Deployment: %w", region, err)
	}
	return &d.Spec.Template, nil
}

// StargateOutcome waits until the lone Stargate pod either watches its
// remote region (a healthy status entry mentioning remoteHost: nil) or
// refuses for a non-transient reason, read from its /status or, when the
// process refused to start at all, from its container's termination
// message.
func (e *Env) StargateOutcome(ctx context.Context, region, pod, remoteHost string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	var decided error
	err = e.Eventually(ctx, "Stargate "+pod+" to watch "+remoteHost+" or refuse", waitConverge, func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(e.Deployed.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, st := range p.Status.ContainerStatuses {
			if t := st.State.Terminated; t != nil {
				r := reasonIn(t.Message)
				decided = reason.Wrap(r, fmt.Errorf("Stargate %s exited with code %d: %s", pod, t.ExitCode, strings.TrimSpace(t.Message)))
				return nil
			}
		}
		if p.Status.PodIP == "" {
			return fmt.Errorf("pod %s has no IP yet (phase %s)", pod, p.Status.Phase)
		}
		doc, err := e.StargateStatus(ctx, Pod{Name: pod, IP: p.Status.PodIP})
		if err != nil {
			return err
		}
		if r := doc.Failure(); r != reason.None {
			decided = reason.Wrap(r, fmt.Errorf("Stargate %s refused with reason %q: %s", pod, r, doc))
			return nil
		}
		for _, entry := range doc.Entries(remoteHost) {
			if Healthy(entry) {
				decided = nil
				return nil
			}
		}
		return fmt.Errorf("Stargate %s neither watches %s nor refused: %s", pod, remoteHost, doc)
	})
	if err != nil {
		return reason.Wrap(reason.Timeout, err)
	}
	return decided
}

// reasonIn finds a known reason named in a termination message.
func reasonIn(msg string) reason.Reason {
	for _, r := range []reason.Reason{reason.SchemeRequired, reason.InsecureRefused, reason.NoTrust,
		reason.UnknownAuthority, reason.HostnameMismatch, reason.Expired, reason.PlaintextToTLS,
		reason.BadCertificate, reason.InvalidAuthority, reason.BadToken, reason.ClientCertRequired,
		reason.UntrustedClientCert, reason.UnknownSNI} {
		if strings.Contains(msg, string(r)) {
			return r
		}
	}
	return reason.Unknown
}
