package faults

import (
	"errors"
	"fmt"
)

// ErrNoSeam is wrapped when a fault needs a network seam (the address plan
// of a cluster's pods and gateway, or the environment's DNS), or the pods'
// processes on this host (a pod crash), that the
// provider did not give: clusters the harness did not build, reached by
// kubeconfig only. Scenarios report such a case as skipped, with the
// reason, rather than failed.
var ErrNoSeam = errors.New("no network seam on this provider")

// seamOf says which network seam a's injection needs and whether the
// environment gave it.
func seamOf(a Action) error {
	path := func(p Path) error {
		if !p.From.IsValid() || !p.Gateway.IsValid() {
			return fmt.Errorf("%w: a %s fault redirects the source cluster's pod traffic at its gateway, and the provider gave no pod range and gateway for it", ErrNoSeam, a.Kind())
		}
		return nil
	}
	switch f := a.(type) {
	case tcpFault:
		return path(f.Path)
	case UDPFault:
		return path(f.Path)
	case Downgrade:
		return path(f.Path)
	case partition:
		if !f.A.Pods.IsValid() || !f.B.Pods.IsValid() {
			return fmt.Errorf("%w: a partition drops traffic between two clusters' pod and load-balancer ranges on the host, and the provider gave none", ErrNoSeam)
		}
	case podCrash:
		if !f.OnHost {
			return fmt.Errorf("%w: a pod crash signals the pods' processes on this host, and the provider runs the cluster's pods elsewhere", ErrNoSeam)
		}
	case DNSFault:
		for _, in := range f.Intercepts {
			if !in.Server.IsValid() {
				return fmt.Errorf("%w: a DNS fault intercepts queries to a DNS server the provider names, and it named none", ErrNoSeam)
			}
		}
	}
	return nil
}
