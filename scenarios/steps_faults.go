package scenarios

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
)

// Steps that inject faults (package faults) and the faults they inject.
// Every fault a case injects is recorded and named in its report.

// startFault injects f through the World's recorder and notes it on the case.
func (e *Env) startFault(ctx context.Context, f faults.Fault) (*faults.Handle, error) {
	h, err := faults.Start(ctx, f, e.recorder)
	if err != nil {
		return nil, stepFailed("inject the fault "+f.Name, err)
	}
	span := "until the case's steps end"
	if f.Duration > 0 {
		span = "for " + f.Duration.String()
	}
	e.NoteFault(fmt.Sprintf("%s %s: %s (%s, from %s)", f.Kind(), f.Target, f.Action.Describe(), span, time.Now().UTC().Format(time.RFC3339)))
	return h, nil
}

// startMadeFault makes the fault with mk and starts it.
func (e *Env) startMadeFault(ctx context.Context, mk func(e *Env) (faults.Fault, error)) (*faults.Handle, error) {
	f, err := mk(e)
	if err != nil {
		return nil, stepFailed("describe the fault", err)
	}
	return e.startFault(ctx, f)
}

// duringFault runs step while the fault mk describes is active and undoes
// the fault after it; an error undoing it makes the case an Error.
func duringFault(mk func(e *Env) (faults.Fault, error), step Try) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		h, err := e.startMadeFault(ctx, mk)
		if err != nil {
			return err
		}
		err = step(ctx, e, s)
		return withCleanup(err, "undo the fault", h.Stop(ctx))
	}
}

// faultRunsOut injects the fault mk describes and waits until its
// duration has passed and it is undone.
func faultRunsOut(mk func(e *Env) (faults.Fault, error)) Try {
	return func(ctx context.Context, e *Env, _ Setting) error {
		h, err := e.startMadeFault(ctx, mk)
		if err != nil {
			return err
		}
		return faultOver(ctx, h)
	}
}

// faultOver waits until the fault's duration has passed and it is undone
// (undoing it at once when ctx ends first); a wait cut short or a failed
// undo is a step's failure.
func faultOver(ctx context.Context, h *faults.Handle) error {
	var cut error
	select {
	case <-h.Done():
	case <-ctx.Done():
		cut = stepFailed("wait for the fault to run out", ctx.Err())
	}
	return withCleanup(cut, "undo the fault", h.Stop(ctx))
}

// quicLossAndDelay: 20 % loss and 100 ms ± 20 ms delay both ways on the
// tunnel's UDP path, for at most two minutes.
func quicLossAndDelay(e *Env) (faults.Fault, error) {
	path, err := e.quicPath()
	if err != nil {
		return faults.Fault{}, err
	}
	imp := faults.Impairment{Loss: 0.2, Delay: 100 * time.Millisecond, Jitter: 20 * time.Millisecond}
	return faults.Fault{
		Name: "quic loss and delay", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.QUICService},
		Action: faults.UDPFault{Path: path, Upstream: imp, Downstream: imp, Seed: 7}, Duration: 2 * time.Minute,
	}, nil
}

// quicBlackhole: every datagram on the tunnel's UDP path dropped, for 5 s.
func quicBlackhole(e *Env) (faults.Fault, error) {
	path, err := e.quicPath()
	if err != nil {
		return faults.Fault{}, err
	}
	hole := faults.Impairment{Loss: 1}
	return faults.Fault{
		Name: "quic blackhole", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.QUICService},
		Action: faults.UDPFault{Path: path, Upstream: hole, Downstream: hole}, Duration: 5 * time.Second,
	}, nil
}

// downgradeMITM: a man in the middle on the path from the workers to the
// bootstrap ingress answers plaintext h2c.
func downgradeMITM(e *Env) (faults.Fault, error) {
	lb, err := e.loadBalancer(e.Bootstrap(), manifests.GRPCService, manifests.GRPCPort)
	if err != nil {
		return faults.Fault{}, err
	}
	return faults.Fault{
		Name: "downgrade mitm", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.GRPCService},
		Action: faults.Downgrade{Path: faults.PathBetween(e.cluster(e.Workers()), lb), Mode: faults.DowngradeH2C},
	}, nil
}

// dnsSpoofToRemote: the workers' cluster DNS answers the bootstrap ingress
// name with the remote region's ingress address.
func dnsSpoofToRemote(e *Env) (faults.Fault, error) {
	remote, err := remoteWatched(e)
	if err != nil {
		return faults.Fault{}, err
	}
	lb, err := e.loadBalancer(remote, manifests.GRPCService, manifests.GRPCPort)
	if err != nil {
		return faults.Fault{}, err
	}
	name := e.Topology.GRPCHost(e.Bootstrap())
	return faults.Fault{
		Name: "dns spoof", Target: faults.Target{Cluster: e.Workers(), Service: name},
		Action: faults.DNSFault{Name: name, Mode: faults.Spoof, Addr: lb.Addr(),
			Intercepts: []faults.DNSIntercept{faults.ClusterDNSIntercept(e.cluster(e.Workers()))}},
	}, nil
}

// quicPath is the UDP path from the workers' pods to the bootstrap
// region's QUIC relay load balancer.
func (e *Env) quicPath() (faults.Path, error) {
	lb, err := e.loadBalancer(e.Bootstrap(), manifests.QUICService, manifests.QUICPort)
	if err != nil {
		return faults.Path{}, err
	}
	return faults.PathBetween(e.cluster(e.Workers()), lb), nil
}

// loadBalancer returns the address:port of a region's LoadBalancer Service.
func (e *Env) loadBalancer(region, service string, port int) (netip.AddrPort, error) {
	c, ok := e.Deployed.Cluster(region)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("no deployment of %s", region)
	}
	for _, lb := range c.LoadBalancers {
		if lb.Service != service || len(lb.Addresses) == 0 {
			continue
		}
		a, err := netip.ParseAddr(lb.Addresses[0])
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("%s load balancer address %q: %w", service, lb.Addresses[0], err)
		}
		return netip.AddrPortFrom(a, uint16(port)), nil
	}
	return netip.AddrPort{}, fmt.Errorf("region %s has no %s load balancer with an address", region, service)
}

// cluster is the named cluster as the provider described it (with its
// address plan, which the network faults aim at).
func (e *Env) cluster(name string) clusters.ClusterInfo {
	c, _ := e.Config.Environment.Cluster(name)
	return c
}
