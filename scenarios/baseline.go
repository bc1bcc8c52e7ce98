package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy/manifests"
)

// checkBaseline waits up to d until the cell is as every case expects to
// find it, and otherwise says what is broken: every region's Stargate
// workload has all its replicas ready, and every replica holds the base
// Pylon's registration and reverse tunnel (asked on the server side). A
// case that finds it broken is blocked, not blamed: the state was left by
// something before it. While it is broken, what the base components
// report is read too (baseWatch): a refusal established there ends the
// wait at once, as a *BaseFailure.
//
// With early, a base component's refusal that holds (baseWatch) ends the
// wait at once as a *BaseFailure. Without it (the deployment's baseline
// held before, so an earlier case's fault may still be healing) the wait
// runs its course, and only a baseline still broken at its end is blamed
// on the refusal seen last.
func (e *Env) checkBaseline(ctx context.Context, d time.Duration, early bool) error {
	w := e.newBaseWatch()
	var typed *BaseFailure
	err := e.Eventually(ctx, "the cell's baseline (every Stargate ready, the base Pylon registered and tunnelled everywhere)", d, func(ctx context.Context) error {
		err := e.baselineBroken(ctx)
		if err == nil {
			typed = nil
			return nil
		}
		if typed = w.lookEvery(ctx); typed != nil && early {
			return nil
		}
		return err
	})
	if typed != nil && (early || err != nil) {
		return typed
	}
	return err
}

// baselineBroken is one look at the baseline.
func (e *Env) baselineBroken(ctx context.Context) error {
	id, err := e.pylonServerID(ctx)
	if err != nil {
		return fmt.Errorf("the base Pylon: %w", err)
	}
	hs, err := e.askStargates(ctx)
	if err != nil {
		return err
	}
	for _, r := range e.Regions() {
		want, err := e.stargateReplicas(ctx, r)
		if err != nil {
			return err
		}
		ready := 0
		for _, h := range hs {
			if h.Region == r && h.Ready {
				ready++
			}
		}
		if ready < want {
			return fmt.Errorf("region %s has %d of %d Stargate replicas ready", r, ready, want)
		}
	}
	var missing []string
	for _, h := range hs {
		if !h.Ready {
			continue
		}
		if h.Source != ProofStatus {
			// A real Stargate shows no ids: the base Pylon's model served
			// there (its registration active, its tunnel up) is what
			// stands for it.
			if ok, _ := h.activeHere(echoModel); !ok {
				missing = append(missing, h.name()+" serves no model "+echoModel+" (the base Pylon's: no active registration with its tunnel up)")
			}
			continue
		}
		if !slices.Contains(h.Registrations, id) {
			missing = append(missing, h.name()+" holds no registration of the base Pylon ("+id+")")
		}
		if !slices.Contains(h.Tunnels, id) {
			missing = append(missing, h.name()+" holds no reverse tunnel of the base Pylon ("+id+")")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s", strings.Join(missing, "; "))
	}
	return nil
}

// stargateReplicas is how many Stargate replicas region's workload wants
// (a StatefulSet, a Deployment, or both).
func (e *Env) stargateReplicas(ctx context.Context, region string) (int, error) {
	cs, err := e.Kube(region)
	if err != nil {
		return 0, err
	}
	ns, n, found := e.Deployed.Namespace, 0, false
	sts, err := cs.AppsV1().StatefulSets(ns).Get(ctx, manifests.StargateName, metav1.GetOptions{})
	switch {
	case err == nil:
		n, found = n+replicasOf(sts.Spec.Replicas), true
	case !apierrors.IsNotFound(err):
		return 0, fmt.Errorf("region %s: read the Stargate StatefulSet: %w", region, err)
	}
	var d *appsv1.Deployment
	d, err = cs.AppsV1().Deployments(ns).Get(ctx, manifests.StargateName, metav1.GetOptions{})
	switch {
	case err == nil:
		n, found = n+replicasOf(d.Spec.Replicas), true
	case !apierrors.IsNotFound(err):
		return 0, fmt.Errorf("region %s: read the Stargate Deployment: %w", region, err)
	}
	if !found {
		return 0, fmt.Errorf("region %s has no Stargate StatefulSet or Deployment", region)
	}
	return n, nil
}

func replicasOf(r *int32) int {
	if r == nil {
		return 1
	}
	return int(*r)
}
