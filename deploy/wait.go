package deploy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/deploy/manifests"
)

// pollInterval is how often readiness conditions are read.
const pollInterval = 300 * time.Millisecond

// check reads a condition once: done, or where it stands.
type check func(ctx context.Context) (done bool, state status, err error)

// status is where a wait stands: text, and the pods whose state a wait
// that gives up adds to it. They are listed only then, not on every poll
// of every rollout, where the list cost the API server a read each time
// and was thrown away.
type status struct {
	text string
	pods *podSet
}

// podSet names the pods a status describes.
type podSet struct {
	cs  kubernetes.Interface
	ns  string
	sel *metav1.LabelSelector
}

// says is a status of text alone.
func says(format string, args ...any) status { return status{text: fmt.Sprintf(format, args...)} }

// withPods is s, describing the pods of sel in ns too.
func (s status) withPods(cs kubernetes.Interface, ns string, sel *metav1.LabelSelector) status {
	s.pods = &podSet{cs: cs, ns: ns, sel: sel}
	return s
}

// describe is s's text with its pods' state (listed now).
func (s status) describe(ctx context.Context) string {
	if s.pods == nil {
		return s.text
	}
	return s.text + podsState(ctx, s.pods.cs, s.pods.ns, s.pods.sel)
}

// pylonReadyGrace bounds the wait for the base Pylon's readiness when
// nothing typed refused it; after it, rolled out is enough. A variable
// for the test that waits it out.
var pylonReadyGrace = 45 * time.Second

// describeTimeout bounds the list that describes a wait's pods after the
// wait's own deadline.
const describeTimeout = 5 * time.Second

// stopWaiting is what a check returns to end its wait at once: the
// condition will not be met, for the reason err gives (a base component's
// typed refusal, BaseRefusals).
type stopWaiting struct{ err error }

func (s *stopWaiting) Error() string { return s.err.Error() }

// waitFor polls c until it is done or ctx ends; the error then says what
// was awaited and the last state seen. A check that returns a
// *stopWaiting ends the wait at once with its error.
func waitFor(ctx context.Context, what string, c check) error {
	start := time.Now()
	last := says("not read yet")
	var stopped *stopWaiting
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		done, state, err := c(ctx)
		if errors.As(err, &stopped) {
			return false, err
		}
		if err != nil {
			// Transient API errors are reported if the wait ends.
			last = says("error: %v", err)
			return false, nil
		}
		last = state
		return done, nil
	})
	if err != nil {
		if stopped != nil {
			return fmt.Errorf("stopped waiting after %s for %s (%s): %w", time.Since(start).Round(time.Millisecond), what, last.text, stopped.err)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || wait.Interrupted(err) {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), describeTimeout)
			defer cancel()
			return fmt.Errorf("gave up after %s waiting for %s: %s", time.Since(start).Round(time.Millisecond), what, last.describe(dctx))
		}
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// waitReady waits for every workload and LoadBalancer Service of objs.
// While it waits for the base Pylon's Deployment (the one
// manifests.PylonName names), watch, when set, reads what the base
// components report: a typed refusal it returns ends the wait at once,
// instead of at the deadline. A Deployment whose defect (harness
// selftest) keeps it unready is waited for exactly like one whose
// regression does: the selftest takes no path a real regression does not.
func waitReady(ctx context.Context, cs kubernetes.Interface, objs []manifests.Object, watch RefusalWatch) error {
	for _, o := range objs {
		var err error
		switch w := o.(type) {
		case *appsv1.Deployment:
			what := "deployment " + w.Namespace + "/" + w.Name
			if watch == nil || w.Name != manifests.PylonName {
				err = waitFor(ctx, what+" available", deploymentReady(cs, w.Namespace, w.Name))
				break
			}
			// The base Pylon: a typed refusal ends the wait at once; a Pylon
			// that runs but is not ready after pylonReadyGrace without one
			// (its Stargates advertise identities the router cannot route,
			// say) is for the cell's baseline and its cases to judge, not
			// for the deploy to time out on.
			gctx, cancel := context.WithTimeout(ctx, pylonReadyGrace)
			err = waitFor(gctx, what+" available", watched(deploymentReady(cs, w.Namespace, w.Name), watch))
			graceOver := errors.Is(gctx.Err(), context.DeadlineExceeded)
			cancel()
			if err != nil && graceOver && ctx.Err() == nil {
				err = waitFor(ctx, what+" rolled out (running, not ready after "+pylonReadyGrace.String()+")", deploymentRolledOut(cs, w.Namespace, w.Name))
			}
		case *appsv1.StatefulSet:
			err = waitFor(ctx, "statefulset "+w.Namespace+"/"+w.Name+" ready", statefulSetReady(cs, w.Namespace, w.Name))
		case *corev1.Service:
			if w.Spec.Type == corev1.ServiceTypeLoadBalancer {
				err = waitFor(ctx, "load balancer "+w.Namespace+"/"+w.Name+" address", lbReady(cs, w.Namespace, w.Name))
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// RefusalWatch reads, while a wait for the base Pylon is not met, what
// the base components report (Pylon's own refusal, each region's ingress
// …), and returns a typed refusal (an error holding a *reason.Error) once
// one is established, nil until then. One RefusalWatch serves one wait;
// it keeps what it saw between its looks.
type RefusalWatch func(ctx context.Context) error

// watchEvery is how often a RefusalWatch is asked during a wait: it reads
// several documents, so not on every poll of the condition.
const watchEvery = time.Second

// watched is c, asking watch (at most every watchEvery) while c is not
// done; a refusal watch returns ends the wait (stopWaiting).
func watched(c check, watch RefusalWatch) check {
	var asked time.Time
	return func(ctx context.Context) (bool, status, error) {
		done, state, err := c(ctx)
		if done || time.Since(asked) < watchEvery {
			return done, state, err
		}
		asked = time.Now()
		if rerr := watch(ctx); rerr != nil {
			return false, state, &stopWaiting{err: rerr}
		}
		return done, state, err
	}
}

// deploymentReady: the controller saw the latest spec, every replica is
// updated and available, and no other pod (an old ReplicaSet's, maybe
// terminating) matches the selector.
func deploymentReady(cs kubernetes.Interface, ns, name string) check {
	return func(ctx context.Context) (bool, status, error) {
		d, want, err := getDeployment(ctx, cs, ns, name)
		if err != nil {
			return false, status{}, err
		}
		st := d.Status
		state := says("generation %d observed %d, %d/%d updated, %d available", d.Generation, st.ObservedGeneration, st.UpdatedReplicas, want, st.AvailableReplicas)
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.AvailableReplicas != want || st.Replicas != want {
			return false, state.withPods(cs, ns, d.Spec.Selector), nil
		}
		return podsSettled(ctx, cs, ns, d.Spec.Selector, want, state)
	}
}

// statefulSetReady: the controller saw the latest spec, every replica is
// ready and at the update revision, and no extra pod matches the selector.
func statefulSetReady(cs kubernetes.Interface, ns, name string) check {
	return func(ctx context.Context) (bool, status, error) {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, status{}, err
		}
		want := int32(1)
		if s.Spec.Replicas != nil {
			want = *s.Spec.Replicas
		}
		st := s.Status
		state := says("generation %d observed %d, %d/%d ready, %d updated", s.Generation, st.ObservedGeneration, st.ReadyReplicas, want, st.UpdatedReplicas)
		if st.ObservedGeneration < s.Generation || st.ReadyReplicas != want || st.Replicas != want ||
			(st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision) {
			return false, state.withPods(cs, ns, s.Spec.Selector), nil
		}
		return podsSettled(ctx, cs, ns, s.Spec.Selector, want, state)
	}
}

// podsSettled is done when exactly want pods match sel, all ready and none
// terminating.
func podsSettled(ctx context.Context, cs kubernetes.Interface, ns string, sel *metav1.LabelSelector, want int32, state status) (bool, status, error) {
	pods, err := listPods(ctx, cs, ns, sel)
	if err != nil {
		return false, status{}, err
	}
	ready := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil && podReady(p) {
			ready++
		}
	}
	if len(pods) != int(want) || ready != int(want) {
		return false, state.withPods(cs, ns, sel), nil
	}
	return true, state, nil
}

func lbReady(cs kubernetes.Interface, ns, name string) check {
	return func(ctx context.Context) (bool, status, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, status{}, err
		}
		if len(s.Status.LoadBalancer.Ingress) == 0 {
			return false, says("status.loadBalancer.ingress is empty (is a load-balancer controller running?)"), nil
		}
		return true, status{}, nil
	}
}

func listPods(ctx context.Context, cs kubernetes.Interface, ns string, sel *metav1.LabelSelector) ([]corev1.Pod, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("selector %v: %w", sel, err)
	}
	return listPodsBy(ctx, cs, ns, s)
}

func listPodsBy(ctx context.Context, cs kubernetes.Interface, ns string, s labels.Selector) ([]corev1.Pod, error) {
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: s.String()})
	if err != nil {
		return nil, fmt.Errorf("list pods %q in %s: %w", s.String(), ns, err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podsState describes the pods of sel for a timeout message: name, phase,
// readiness, and why a container waits or last terminated.
func podsState(ctx context.Context, cs kubernetes.Interface, ns string, sel *metav1.LabelSelector) string {
	pods, err := listPods(ctx, cs, ns, sel)
	if err != nil {
		return "; pods: " + err.Error()
	}
	if len(pods) == 0 {
		return "; no pods"
	}
	var b strings.Builder
	b.WriteString("; pods:")
	for _, p := range pods {
		fmt.Fprintf(&b, " %s(%s", p.Name, p.Status.Phase)
		if p.DeletionTimestamp != nil {
			b.WriteString(",terminating")
		} else if podReady(p) {
			b.WriteString(",ready")
		}
		for _, c := range p.Status.ContainerStatuses {
			switch {
			case c.State.Waiting != nil:
				fmt.Fprintf(&b, ",%s waiting %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
			case c.LastTerminationState.Terminated != nil:
				t := c.LastTerminationState.Terminated
				fmt.Fprintf(&b, ",%s restarted %d× last exit %d %s", c.Name, c.RestartCount, t.ExitCode, t.Reason)
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// getDeployment reads a Deployment and the replicas it asks for.
func getDeployment(ctx context.Context, cs kubernetes.Interface, ns, name string) (*appsv1.Deployment, int32, error) {
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, 0, err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d, want, nil
}

// deploymentRolledOut: the controller saw the latest spec and every
// replica runs it, ready or not.
func deploymentRolledOut(cs kubernetes.Interface, ns, name string) check {
	return func(ctx context.Context) (bool, status, error) {
		d, want, err := getDeployment(ctx, cs, ns, name)
		if err != nil {
			return false, status{}, err
		}
		st := d.Status
		state := says("generation %d observed %d, %d/%d updated, %d in all", d.Generation, st.ObservedGeneration, st.UpdatedReplicas, want, st.Replicas)
		return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.Replicas == want, state, nil
	}
}
