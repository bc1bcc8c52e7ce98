package scenarios

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
func (e *Env) WithStargate(ctx context.Context, region, variant string, remoteURLs []string, fn func(ctx context.Context, pod string) error) error {
	return e.WithStargateArgs(ctx, region, variant, func(args []string) []string {
		var out []string
		for _, a := range args {
			if !strings.HasPrefix(a, remoteURLFlag) {
				out = append(out, a)
			}
		}
		for _, u := range remoteURLs {
			out = append(out, remoteURLFlag+u)
		}
		return out
	}, fn)
}

// WithStargateArgs is WithStargate with the template's arguments edited
// by edit instead of only the remote watch URLs replaced.
func (e *Env) WithStargateArgs(ctx context.Context, region, variant string, edit func(args []string) []string, fn func(ctx context.Context, pod string) error) error {
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
	c.Args = edit(slices.Clone(c.Args))
	c.ReadinessProbe = nil
	// A refusal at start-up ends the process, which writes it as a
	// reason.Message to the template's terminationMessagePath; the API
	// reports it as the terminated state's message (terminated).
	return e.withPod(ctx, region, pod, "Stargate variant", func(ctx context.Context) error {
		return fn(ctx, name)
	})
}

// withPod creates pod (which carries manifests.VariantLabel) in region (first deleting a leftover of the same
// name and waiting for it to go), runs fn, then keeps the pod's state and
// logs in the evidence and deletes it whatever fn returned. A failure to
// create or delete it is a step's failure (the case is an Error).
func (e *Env) withPod(ctx context.Context, region string, pod *corev1.Pod, what string, fn func(ctx context.Context) error) (err error) {
	cs, err := e.Kube(region)
	if err != nil {
		return stepFailed("reach region "+region, err)
	}
	name := pod.Name
	api := cs.CoreV1().Pods(pod.Namespace)
	del := func(ctx context.Context) error {
		zero := int64(0)
		err := api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err := del(ctx); err != nil {
		return stepFailed("delete an old "+what+" "+name, err)
	}
	if err := e.Eventually(ctx, "old pod "+name+" gone", time.Minute, func(ctx context.Context) error {
		if _, err := api.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod %s still exists (%v)", name, err)
		}
		return nil
	}); err != nil {
		return stepFailed("wait for an old "+what+" to go", err)
	}
	if _, err := api.Create(ctx, pod, metav1.CreateOptions{FieldManager: "nvcf-harness-scenarios"}); err != nil {
		return stepFailed(fmt.Sprintf("create %s %s in %s", what, name, region), err)
	}
	defer func() {
		v := pod.Labels[manifests.VariantLabel]
		e.keepVariant(ctx, region, v, manifests.VariantLabel+"="+v)
		err = withCleanup(err, "delete "+what+" "+name, del(context.WithoutCancel(ctx)))
	}()
	return fn(ctx)
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
// process refused to start at all, from its container's typed termination
// message.
func (e *Env) StargateOutcome(ctx context.Context, region, pod, remoteHost string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	var decided error
	err = e.Eventually(ctx, "Stargate "+pod+" to watch "+remoteHost+" or refuse", waitConverge, func(ctx context.Context) error {
		ip, exited, err := e.stargateVariantIP(ctx, cs, pod)
		if err != nil || exited != nil {
			decided = exited
			return err
		}
		doc, err := e.StargateStatus(ctx, Pod{Name: pod, IP: ip})
		if err != nil {
			return err
		}
		if f := doc.Failure(reason.OriginStargate); f != nil {
			decided = fmt.Errorf("Stargate %s refused: %w", pod, f)
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

// terminated is the refusal a terminated container's message holds: the
// reason.Message the component wrote to its terminationMessagePath. Any
// other message (a crash's log tail, say) is reported, quoted, with
// reason.Unknown: nothing searches it for a reason.
func terminated(t *corev1.ContainerStateTerminated, what string) error {
	m, err := reason.ParseMessage(strings.TrimSpace(t.Message))
	if err != nil {
		return reason.Wrap(reason.Unknown, fmt.Errorf("%s, without a typed termination message: %w", what, err))
	}
	return reason.WrapFrom(m.Reason, m.Origin, fmt.Errorf("%s: %s", what, m.Detail))
}

// notReadyName names the not-ready Stargate pod: a DNS label the identity
// template renders, and no StatefulSet ordinal (stargate-<n>), so the
// workload's controller never adopts it.
const notReadyName = "stargate-not-ready"

// neverReady is a readiness probe no container can pass, whatever its
// image: an exec of a path that exists in no image.
var neverReady = &corev1.Probe{
	ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/conformance.nvcf/never-ready"}}},
	PeriodSeconds: 2, FailureThreshold: 1,
}

// notReadyPod is the not-ready Stargate pod in namespace ns, from the
// Stargate workload's pod template tmpl: the template's labels (which the
// Services select; no pod-template-hash or controller-revision-hash, so no
// ReplicaSet or StatefulSet adopts it) and spec, with every container's
// readiness probe replaced by neverReady.
func notReadyPod(tmpl *corev1.PodTemplateSpec, ns string) *corev1.Pod {
	lbl := maps.Clone(tmpl.Labels)
	if lbl == nil {
		lbl = map[string]string{}
	}
	lbl[manifests.VariantLabel] = "not-ready"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: notReadyName, Namespace: ns, Labels: lbl},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].ReadinessProbe = neverReady.DeepCopy()
	}
	return pod
}

// WithNotReadyStargate starts, in region, a real Stargate pod that is never
// ready: the region's Stargate pod template (containers, arguments, status
// shim) under the template's own labels, so the Stargate Service selects
// it and its EndpointSlice lists it, with a readiness probe that can never
// pass (an exec of a path no image has: the reference image and a real
// one alike, and what a real cluster sees of a Stargate that never turns
// ready). "Running and not ready" is proven from Kubernetes alone: the
// pod's phase, container states and Ready condition, and the Stargate
// Service's EndpointSlice listing it with ready=false (what the router
// reads); the Stargate itself need only answer the run's server-side
// source (/status on the reference, /metrics and ListModels on a real
// one, askStargate), so that the sweeps can ask it too. Once all that
// holds, fn runs with it; afterwards the pod must still be running and not
// ready, and it is deleted whatever fn returned. Any of these steps
// failing makes the case an Error.
func (e *Env) WithNotReadyStargate(ctx context.Context, region string, fn func(ctx context.Context, p Pod) error) error {
	tmpl, err := e.stargateTemplate(ctx, region)
	if err != nil {
		return stepFailed("read the Stargate pod template", err)
	}
	return e.withPod(ctx, region, notReadyPod(tmpl, e.Deployed.Namespace), "not-ready Stargate", func(ctx context.Context) error {
		var p Pod
		if err := e.Eventually(ctx, "Stargate "+notReadyName+" running, answering the server-side checks and listed not ready", waitConverge, func(ctx context.Context) (err error) {
			p, err = e.notReady(ctx, region)
			return err
		}); err != nil {
			return stepFailed("start a not-ready Stargate in "+region, err)
		}
		e.mustAnswer = append(e.mustAnswer, region+"/"+p.Name)
		defer func() {
			e.mustAnswer = slices.DeleteFunc(e.mustAnswer, func(n string) bool { return n == region+"/"+p.Name })
		}()
		err := fn(ctx, p)
		if _, nerr := e.notReady(ctx, region); nerr != nil {
			err = errors.Join(err, stepFailed("keep the not-ready Stargate running and not ready through the case", nerr))
		}
		return err
	})
}

// notReady checks that the not-ready Stargate of region runs (no container
// restarted or ended), is not ready, answers what the server-side checks
// read (askStargate: /status, or /metrics and ListModels for a real
// Stargate, which serves no /status), and is listed by the Stargate
// Service's EndpointSlices with ready=false.
func (e *Env) notReady(ctx context.Context, region string) (Pod, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return Pod{}, err
	}
	ns := e.Deployed.Namespace
	kp, err := cs.CoreV1().Pods(ns).Get(ctx, notReadyName, metav1.GetOptions{})
	if err != nil {
		return Pod{}, err
	}
	p := Pod{Name: kp.Name, IP: kp.Status.PodIP, Ready: podReady(*kp)}
	if kp.Status.Phase != corev1.PodRunning || p.IP == "" || p.Ready || len(kp.Status.ContainerStatuses) != len(kp.Spec.Containers) {
		return p, fmt.Errorf("pod %s: phase %s, ip %q, ready %t, containers %s", p.Name, kp.Status.Phase, p.IP, p.Ready, containerStates(*kp))
	}
	for _, c := range kp.Status.ContainerStatuses {
		if c.State.Running == nil || c.RestartCount > 0 {
			return p, fmt.Errorf("pod %s: a container is not running or restarted: %s", p.Name, containerStates(*kp))
		}
	}
	if _, err := e.askStargate(ctx, region, p); err != nil {
		return p, err
	}
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + manifests.HeadlessService})
	if err != nil {
		return p, err
	}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef == nil || ep.TargetRef.Name != p.Name {
				continue
			}
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				return p, fmt.Errorf("EndpointSlice %s lists pod %s as ready (%v)", s.Name, p.Name, ep.Conditions.Ready)
			}
			return p, nil
		}
	}
	return p, fmt.Errorf("no EndpointSlice of Service %s lists pod %s", manifests.HeadlessService, p.Name)
}

// stargateVariantIP is the IP of the lone Stargate pod, or, when its
// container ended (refusing its configuration, say), the typed outcome of
// that exit; err while the pod has no IP yet.
func (e *Env) stargateVariantIP(ctx context.Context, cs kubernetes.Interface, pod string) (ip string, exited, err error) {
	p, err := cs.CoreV1().Pods(e.Deployed.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	for _, st := range p.Status.ContainerStatuses {
		if t := st.State.Terminated; t != nil {
			return "", terminated(t, fmt.Sprintf("Stargate %s exited with code %d", pod, t.ExitCode)), nil
		}
	}
	if p.Status.PodIP == "" {
		return "", nil, fmt.Errorf("pod %s has no IP yet (phase %s)", pod, p.Status.Phase)
	}
	return p.Status.PodIP, nil, nil
}
