package lb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/nvcf/conformance/clusters"
)

// publish sets status.loadBalancer.ingress and the DNS names.
func (c *controller) publish(ctx context.Context, svc *corev1.Service, st *svcState) error {
	hosts := clusters.ExternalHostnames(svc.Annotations)
	c.withdraw(st, hosts)
	if c.cfg.DNS != nil {
		for _, h := range hosts {
			c.cfg.DNS.Set(h, st.lbAddr)
		}
	}
	st.hostnames = hosts
	in := svc.Status.LoadBalancer.Ingress
	if len(in) == 1 && in[0].IP == st.lbAddr.String() {
		return nil
	}
	vip := corev1.LoadBalancerIPModeVIP
	want := []corev1.LoadBalancerIngress{{IP: st.lbAddr.String(), IPMode: &vip}}
	up := svc.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		up.Status.LoadBalancer.Ingress = want
		_, err := c.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, up, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) { // the lister lagged: read the latest and try again
			if fresh, gerr := c.client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{}); gerr == nil {
				up = fresh.DeepCopy()
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("set load-balancer status of %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	c.log.Info("load balancer ready", "service", svc.Namespace+"/"+svc.Name, "addr", st.lbAddr, "hostnames", hosts)
	return nil
}

// withdraw removes the DNS names of st that are not in keep.
func (c *controller) withdraw(st *svcState, keep []string) {
	if c.cfg.DNS == nil {
		return
	}
	for _, h := range st.hostnames {
		if !slices.Contains(keep, h) {
			c.cfg.DNS.Remove(h)
		}
	}
	if keep == nil {
		st.hostnames = nil
	}
}

// teardown closes everything of a Service that is gone.
func (c *controller) teardown(ctx context.Context, key string) error {
	st := c.state[key]
	if st == nil {
		return nil
	}
	for _, l := range st.listeners {
		l.close()
	}
	var errs []error
	for _, a := range st.addrs {
		errs = append(errs, c.delAddr(ctx, a))
	}
	c.withdraw(st, nil)
	c.pool.release(key)
	delete(c.state, key)
	c.log.Info("service gone; listeners closed", "service", key)
	return errors.Join(errs...)
}

func (c *controller) teardownAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for k := range c.state {
		errs = append(errs, c.teardown(ctx, k))
	}
	return errors.Join(errs...)
}
