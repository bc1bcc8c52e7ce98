package scenarios

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/wire/reason"
)

// resilienceTLSScenarios put someone in the path of a fresh Pylon's TLS:
// a man in the middle answering plaintext, or a DNS answer pointing the
// bootstrap name at another region. Pylon must refuse, never register.
func resilienceTLSScenarios() []Scenario {
	return []Scenario{
		{
			ID: "resilience/downgrade-mitm", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelDeploys},
			Summary:  "a man in the middle on the bootstrap ingress path answers plaintext h2c: a fresh Pylon refuses with plaintext-to-tls and never registers there",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   FailClosed(reason.PlaintextToTLS), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				return e.underFault(ctx, s, func() (faults.Fault, error) {
					lb, err := e.loadBalancer(e.Bootstrap(), manifests.GRPCService, manifests.GRPCPort)
					if err != nil {
						return faults.Fault{}, err
					}
					return faults.Fault{
						Name: "downgrade mitm", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.GRPCService},
						Action: faults.Downgrade{Path: faults.PathBetween(e.cluster(e.Workers()), lb), Mode: faults.DowngradeH2C},
					}, nil
				}, "downgrade")
			},
		},
		{
			ID: "resilience/dns-spoof", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelDeploys},
			Summary:  "the workers' DNS answers the bootstrap ingress name with another region's ingress: a fresh Pylon refuses the handshake, never registers",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   FailClosed(reason.HostnameMismatch, reason.UnknownAuthority), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				return e.underFault(ctx, s, func() (faults.Fault, error) {
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
				}, "dns-spoof")
			},
		},
	}
}

// underFault deploys a fresh Pylon variant and reads its outcome, with the
// fault that mk describes active when s is Faulty (and none with the
// control's configuration).
func (e *Env) underFault(ctx context.Context, s Setting, mk func() (faults.Fault, error), variant string) error {
	if s == Faulty {
		f, err := mk()
		if err != nil {
			return err
		}
		h, err := e.startFault(ctx, f)
		if err != nil {
			return err
		}
		defer h.Stop(ctx)
	}
	return e.WithPylon(ctx, PylonVariant{Name: variant}, func(ctx context.Context, name string) error {
		return e.PylonOutcome(ctx, name, waitPylon)
	})
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
