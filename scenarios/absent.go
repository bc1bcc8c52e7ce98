package scenarios

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Refusals of a target that names no pod. The reference router and QUIC
// relay know every pod and say no-such-pod (unknown-sni on the relay);
// NVCF's know only ready replicas and say not-ready for a pod that does
// not exist ("target stargate {pod} is not ready", "target stargate not
// ready"). Both are fail-closed from the expected origin, but not-ready
// alone does not say why: a broken router that called every pod not ready
// would say it too (the positive control catches that one, since it must
// pass through the same router). So a case accepts not-ready for such a
// target (Expectation.OrIfAbsent) only with the step's proof that the
// named pod is not there at all: no Pod of that name in the region's
// namespace and no endpoint naming it in any EndpointSlice there, read from
// the Kubernetes API before the attempt and again after its refusal. The
// two listings go to the evidence (absent-pod.txt).

// provenAbsent wraps a refusal whose target names pod, which the step
// proved absent before the attempt and after the refusal.
type provenAbsent struct {
	err         error
	region, pod string
}

func (p *provenAbsent) Error() string {
	return fmt.Sprintf("%v (pod %s of region %s proven absent before the attempt and after the refusal: absent-pod.txt)", p.err, p.pod, p.region)
}

func (p *provenAbsent) Unwrap() error { return p.err }

// provingAbsent runs attempt, which names pod of region as its target, and
// marks a refusal it returns with the proof that pod does not exist. A pod
// of that name before the attempt, or after the refusal, is a step's
// failure: the case's premise does not hold.
func (e *Env) provingAbsent(ctx context.Context, region, pod string, attempt func(ctx context.Context) error) error {
	var ev strings.Builder
	fmt.Fprintf(&ev, "target: pod %q of region %s (namespace %s)\n\n", pod, region, e.Deployed.Namespace)
	seen, err := e.podAbsent(ctx, region, pod)
	fmt.Fprintf(&ev, "== before the attempt\n%s\n", seen)
	if err != nil {
		_ = e.noteEvidence("absent-pod.txt", ev.String())
		return stepFailed("prove that pod "+pod+" does not exist before the attempt", err)
	}
	err = attempt(ctx)
	if err == nil || len(refusalsIn(err)) == 0 {
		_ = e.noteEvidence("absent-pod.txt", ev.String())
		return err
	}
	seen, aerr := e.podAbsent(ctx, region, pod)
	fmt.Fprintf(&ev, "== after the refusal\n%s\n", seen)
	_ = e.noteEvidence("absent-pod.txt", ev.String())
	if aerr != nil {
		return fmt.Errorf("%w; and: %w", err, stepFailed("prove that pod "+pod+" still does not exist after the refusal", aerr))
	}
	return &provenAbsent{err: err, region: region, pod: pod}
}

// podAbsent lists every pod of region's namespace and every endpoint of its
// EndpointSlices, and fails when one of them names pod (the Pod's name,
// an endpoint's target or hostname). The listing is returned either way.
func (e *Env) podAbsent(ctx context.Context, region, pod string) (string, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return "", err
	}
	ns := e.Deployed.Namespace
	var b strings.Builder
	fmt.Fprintf(&b, "at %s\n", time.Now().UTC().Format("15:04:05.000"))
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return b.String(), fmt.Errorf("list pods: %w", err)
	}
	var found []string
	fmt.Fprintf(&b, "pods (%d):\n", len(pods.Items))
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "  %-40s ip=%-16s ready=%t\n", p.Name, p.Status.PodIP, podReady(p))
		if p.Name == pod {
			found = append(found, "pod "+p.Name)
		}
	}
	eps, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return b.String(), fmt.Errorf("list EndpointSlices: %w", err)
	}
	fmt.Fprintf(&b, "EndpointSlices (%d):\n", len(eps.Items))
	for _, s := range eps.Items {
		for _, ep := range s.Endpoints {
			target, host := "", ""
			if ep.TargetRef != nil {
				target = ep.TargetRef.Name
			}
			if ep.Hostname != nil {
				host = *ep.Hostname
			}
			ready := "unset"
			if ep.Conditions.Ready != nil {
				ready = fmt.Sprint(*ep.Conditions.Ready)
			}
			fmt.Fprintf(&b, "  %-40s target=%-32s hostname=%-20s addresses=%v ready=%s\n", s.Name, target, host, ep.Addresses, ready)
			if target == pod || host == pod {
				found = append(found, "endpoint of EndpointSlice "+s.Name)
			}
		}
	}
	if len(found) > 0 {
		return b.String(), fmt.Errorf("pod %s exists: %s", pod, strings.Join(found, ", "))
	}
	return b.String(), nil
}
