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

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/wire/reason"
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
		return withFlag(args, remoteURLFlag, remoteURLs...)
	}, fn)
}

// withFlag is args with every "--name=" argument (flag, with its "=")
// replaced by one per value, appended.
func withFlag(args []string, flag string, values ...string) []string {
	out := slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, flag) })
	for _, v := range values {
		out = append(out, flag+v)
	}
	return out
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

// servicePod is a Stargate pod called name in namespace ns, from the
// Stargate workload's pod template tmpl: the template's labels (which the
// Services select; no pod-template-hash or controller-revision-hash, so no
// ReplicaSet or StatefulSet adopts it) with manifests.VariantLabel set to
// variant, and the template's spec.
func servicePod(tmpl *corev1.PodTemplateSpec, ns, name, variant string) *corev1.Pod {
	lbl := maps.Clone(tmpl.Labels)
	if lbl == nil {
		lbl = map[string]string{}
	}
	lbl[manifests.VariantLabel] = variant
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbl},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
}

// notReadyPod is the not-ready Stargate pod in namespace ns: servicePod
// with every container's readiness probe replaced by neverReady.
func notReadyPod(tmpl *corev1.PodTemplateSpec, ns string) *corev1.Pod {
	pod := servicePod(tmpl, ns, notReadyName, "not-ready")
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
		err := e.askedThrough(region+"/"+p.Name, func() error { return fn(ctx, p) })
		if _, nerr := e.notReady(ctx, region); nerr != nil {
			err = errors.Join(err, stepFailed("keep the not-ready Stargate running and not ready through the case", nerr))
		}
		return err
	})
}

// askedThrough runs fn with the Stargate pod named ("region/pod") among
// e.mustAnswer: every server-side sweep asks it meanwhile, whatever its
// readiness or deletion.
func (e *Env) askedThrough(named string, fn func() error) error {
	e.mustAnswer = append(e.mustAnswer, named)
	defer func() {
		e.mustAnswer = slices.DeleteFunc(e.mustAnswer, func(n string) bool { return n == named })
	}()
	return fn()
}

// terminatingName names the terminating Stargate pod (no StatefulSet
// ordinal, as notReadyName).
const terminatingName = "stargate-terminating"

// The terminating Stargate's window. Deleted with terminatingGrace, it
// serves on for terminatingDrain after SIGTERM (its
// --shutdown-drain-timeout-ms) and then stops by itself, well before the
// kubelet's SIGKILL; the drain outlasts a case's attempts and their
// server-side proofs (three heartbeats each) with room to spare.
const (
	terminatingGrace = 60 // seconds
	terminatingDrain = 40 * time.Second
)

// drainFlag is the Stargate flag (NVCF's, which the reference takes too)
// that keeps it serving after SIGTERM.
const drainFlag = "--shutdown-drain-timeout-ms="

// terminatingPod is the terminating Stargate pod in namespace ns before
// its deletion: servicePod with the grace period terminatingGrace and the
// Stargate container told to drain for terminatingDrain.
func terminatingPod(tmpl *corev1.PodTemplateSpec, ns string) *corev1.Pod {
	pod := servicePod(tmpl, ns, terminatingName, "terminating")
	grace := int64(terminatingGrace)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == manifests.StargateName })
	if i < 0 {
		i = 0
	}
	c := &pod.Spec.Containers[i]
	c.Args = append(slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, drainFlag) }),
		fmt.Sprintf("%s%d", drainFlag, terminatingDrain.Milliseconds()))
	return pod
}

// WithTerminatingStargate starts, in region, a real Stargate pod beside
// the workload's (servicePod: the Stargate Service selects it), waits
// until it is ready, answers and is listed ready, then deletes it with a
// grace period of terminatingGrace seconds. Inside that termination window
// it must, proven from Kubernetes and the pod itself before fn runs and
// again after: carry a deletionTimestamp, still run (no container ended
// or restarted), answer the server-side checks (askStargate), and be
// listed by the Stargate Service's EndpointSlice with ready=false,
// serving=true, terminating=true. Serving follows the pod's readiness: a
// Stargate that withdrew its readiness, or stopped serving, on SIGTERM
// makes the case an Error, since a router that read serving as ready
// would then refuse too. fn runs with the terminating pod; the case then
// waits for the pod to go (its drain ends), so no later case meets it.
// Any of these steps failing makes the case an Error.
func (e *Env) WithTerminatingStargate(ctx context.Context, region string, fn func(ctx context.Context, p Pod) error) error {
	tmpl, err := e.stargateTemplate(ctx, region)
	if err != nil {
		return stepFailed("read the Stargate pod template", err)
	}
	cs, err := e.Kube(region)
	if err != nil {
		return stepFailed("reach region "+region, err)
	}
	api := cs.CoreV1().Pods(e.Deployed.Namespace)
	return e.withPod(ctx, region, terminatingPod(tmpl, e.Deployed.Namespace), "terminating Stargate", func(ctx context.Context) error {
		if err := e.Eventually(ctx, "Stargate "+terminatingName+" running, ready, answering and listed ready", waitConverge, func(ctx context.Context) error {
			return e.readyBeforeDeletion(ctx, region)
		}); err != nil {
			return stepFailed("start a Stargate to delete in "+region, err)
		}
		grace := int64(terminatingGrace)
		if err := api.Delete(ctx, terminatingName, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
			return stepFailed(fmt.Sprintf("delete Stargate %s with a grace period of %d s", terminatingName, grace), err)
		}
		err := e.insideTerminationWindow(ctx, region, fn)
		// The case is over: end the window now, with a second deletion
		// of a 1 s grace period, which the kubelet honours, rather than
		// wait out the drain, which only the attempt needed. (Grace 0
		// would only remove the API object, and a new pod of the same
		// name would wait for the old one's drain.)
		now := int64(1)
		if derr := api.Delete(context.WithoutCancel(ctx), terminatingName, metav1.DeleteOptions{GracePeriodSeconds: &now}); derr != nil && !apierrors.IsNotFound(derr) {
			err = errors.Join(err, stepFailed("end the termination window of Stargate "+terminatingName, derr))
		}
		gone := e.Eventually(context.WithoutCancel(ctx), "terminating Stargate "+terminatingName+" gone", time.Duration(terminatingGrace+30)*time.Second, func(ctx context.Context) error {
			if _, err := api.Get(ctx, terminatingName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("pod %s still exists (%v)", terminatingName, err)
			}
			return nil
		})
		return withCleanup(err, "wait for the terminating Stargate to go", gone)
	})
}

// insideTerminationWindow waits until the deleted Stargate of region is
// terminating and serving, runs fn with it while every sweep asks it, and
// requires it to be so still afterwards.
func (e *Env) insideTerminationWindow(ctx context.Context, region string, fn func(ctx context.Context, p Pod) error) error {
	var p Pod
	if err := e.Eventually(ctx, "Stargate "+terminatingName+" terminating, running, answering and listed serving and terminating", waitStatus, func(ctx context.Context) (err error) {
		p, err = e.terminating(ctx, region)
		return err
	}); err != nil {
		return stepFailed("hold a Stargate inside its termination window in "+region, err)
	}
	err := e.askedThrough(region+"/"+p.Name, func() error { return fn(ctx, p) })
	if _, terr := e.terminating(ctx, region); terr != nil {
		err = errors.Join(err, stepFailed("keep the Stargate inside its termination window, serving, through the case", terr))
	}
	return err
}

// readyBeforeDeletion checks that the Stargate to delete runs, is ready,
// answers and is listed ready: serving=true after its deletion then means
// it stayed ready.
func (e *Env) readyBeforeDeletion(ctx context.Context, region string) error {
	_, p, err := e.runningStargate(ctx, region, terminatingName)
	if err != nil {
		return err
	}
	if !p.Ready {
		return fmt.Errorf("pod %s is not ready yet", p.Name)
	}
	cond, err := e.listedAs(ctx, region, p.Name)
	if err != nil {
		return err
	}
	if cond.Ready == nil || !*cond.Ready {
		return fmt.Errorf("the EndpointSlice does not list pod %s ready yet (%s)", p.Name, conditions(cond))
	}
	return nil
}

// terminating checks that the deleted Stargate of region carries a
// deletionTimestamp, still runs and answers (runningStargate), and is
// listed with ready=false, serving=true, terminating=true.
func (e *Env) terminating(ctx context.Context, region string) (Pod, error) {
	kp, p, err := e.runningStargate(ctx, region, terminatingName)
	if err != nil {
		return p, err
	}
	if kp.DeletionTimestamp == nil {
		return p, fmt.Errorf("pod %s has no deletionTimestamp", p.Name)
	}
	cond, err := e.listedAs(ctx, region, p.Name)
	if err != nil {
		return p, err
	}
	if cond.Ready == nil || *cond.Ready || cond.Serving == nil || !*cond.Serving || cond.Terminating == nil || !*cond.Terminating {
		return p, fmt.Errorf("the EndpointSlice lists pod %s (deleted at %s) with %s, not ready=false serving=true terminating=true",
			p.Name, kp.DeletionTimestamp.UTC().Format(time.RFC3339), conditions(cond))
	}
	return p, nil
}

// notReady checks that the not-ready Stargate of region runs (no container
// restarted or ended), is not ready, answers what the server-side checks
// read (askStargate: /status, or /metrics and ListModels for a real
// Stargate, which serves no /status), and is listed by the Stargate
// Service's EndpointSlices with ready=false.
func (e *Env) notReady(ctx context.Context, region string) (Pod, error) {
	kp, p, err := e.runningStargate(ctx, region, notReadyName)
	if err != nil {
		return p, err
	}
	if p.Ready {
		return p, fmt.Errorf("pod %s is ready", p.Name)
	}
	cond, err := e.listedAs(ctx, region, kp.Name)
	if err != nil {
		return p, err
	}
	if cond.Ready == nil || *cond.Ready {
		return p, fmt.Errorf("the EndpointSlice lists pod %s as ready (%s)", p.Name, conditions(cond))
	}
	return p, nil
}

// runningStargate reads the Stargate pod called name in region and checks
// that it runs (phase Running, an IP, every container running and never
// restarted) and answers what the server-side checks read (askStargate).
func (e *Env) runningStargate(ctx context.Context, region, name string) (*corev1.Pod, Pod, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return nil, Pod{}, err
	}
	kp, err := cs.CoreV1().Pods(e.Deployed.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, Pod{}, err
	}
	p := Pod{Name: kp.Name, IP: kp.Status.PodIP, Ready: podReady(*kp)}
	if kp.Status.Phase != corev1.PodRunning || p.IP == "" || len(kp.Status.ContainerStatuses) != len(kp.Spec.Containers) {
		return kp, p, fmt.Errorf("pod %s: phase %s, ip %q, ready %t, containers %s", p.Name, kp.Status.Phase, p.IP, p.Ready, containerStates(*kp))
	}
	for _, c := range kp.Status.ContainerStatuses {
		if c.State.Running == nil || c.RestartCount > 0 {
			return kp, p, fmt.Errorf("pod %s: a container is not running or restarted: %s", p.Name, containerStates(*kp))
		}
	}
	if _, err := e.askStargate(ctx, region, p); err != nil {
		return kp, p, fmt.Errorf("pod %s does not answer: %w", p.Name, err)
	}
	return kp, p, nil
}

// listedAs returns the conditions of pod's endpoint in the Stargate
// Service's EndpointSlices of region (what the router reads); an error
// when no slice lists the pod.
func (e *Env) listedAs(ctx context.Context, region, pod string) (discoveryv1.EndpointConditions, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return discoveryv1.EndpointConditions{}, err
	}
	list, err := cs.DiscoveryV1().EndpointSlices(e.Deployed.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + manifests.HeadlessService})
	if err != nil {
		return discoveryv1.EndpointConditions{}, err
	}
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == pod {
				return ep.Conditions, nil
			}
		}
	}
	return discoveryv1.EndpointConditions{}, fmt.Errorf("no EndpointSlice of Service %s lists pod %s", manifests.HeadlessService, pod)
}

// conditions renders an endpoint's conditions, "-" for an unset one.
func conditions(c discoveryv1.EndpointConditions) string {
	b := func(v *bool) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(*v)
	}
	return fmt.Sprintf("ready=%s serving=%s terminating=%s", b(c.Ready), b(c.Serving), b(c.Terminating))
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
		// The reason and message say why a pod failed before any container ran (the node refused it).
		return "", nil, fmt.Errorf("pod %s has no IP yet (phase %s, reason %q, message %q)", pod, p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	return p.Status.PodIP, nil, nil
}
