// Package corefile renders the one CoreDNS configuration every provider
// gives its clusters. What CoreDNS answers, forwards and caches is decided
// here once; Config carries only how each provider hosts CoreDNS.
//
// The policy, the same on every provider:
//   - the cluster domain (and reverse zones) from the API, uncached: the
//     kubernetes plugin answers from its informer's memory, and a cache
//     would only hold a replaced pod's records (and a Stargate discovering
//     its peers by DNS) back by its TTL;
//   - the topology's external domain forwarded to the environment's
//     external DNS, uncached, so that a DNS fault there (a spoofed answer,
//     NXDOMAIN, SERVFAIL, a drop) acts on the next lookup;
//   - NXDOMAIN for every other name, so nothing a test resolves leaves the
//     machine.
package corefile

import (
	"fmt"
	"net/netip"
	"strings"
)

// Config is what legitimately differs between providers' CoreDNS.
type Config struct {
	// ClusterDomain is the cluster's own domain, e.g. cluster.local.
	ClusterDomain string
	// ExternalDomain is the topology's domain, e.g. nvcf.test.
	ExternalDomain string
	// ExternalDNS is the environment's external DNS server.
	ExternalDNS netip.AddrPort
	// Bind, when valid, is the one address CoreDNS listens on: the
	// embedded provider runs it in the host namespace on the cluster's
	// bridge address. Unset, it listens on all of its pod's addresses.
	Bind netip.Addr
	// Kubeconfig and Context, when set, are how the kubernetes plugin
	// reaches the API from outside the cluster (the embedded provider);
	// unset, it uses its pod's service account.
	Kubeconfig, Context string
	// Probes adds health and ready, which kubeadm's CoreDNS Deployment
	// probes, and reload, which picks up a changed ConfigMap.
	Probes bool
}

// Render returns the Corefile for c.
func Render(c Config) string {
	var b strings.Builder
	bind := ""
	if c.Bind.IsValid() {
		bind = "    bind " + c.Bind.String() + "\n"
	}
	fmt.Fprintf(&b, "%s:53 in-addr.arpa:53 ip6.arpa:53 {\n%s    errors\n", c.ClusterDomain, bind)
	if c.Probes {
		b.WriteString("    health {\n        lameduck 5s\n    }\n    ready\n")
	}
	fmt.Fprintf(&b, "    kubernetes %s in-addr.arpa ip6.arpa {\n", c.ClusterDomain)
	if c.Kubeconfig != "" {
		fmt.Fprintf(&b, "        kubeconfig %s %s\n", c.Kubeconfig, c.Context)
	}
	b.WriteString("        pods insecure\n        fallthrough in-addr.arpa ip6.arpa\n    }\n")
	if c.Probes {
		b.WriteString("    reload\n")
	}
	fmt.Fprintf(&b, "}\n%s:53 {\n%s    errors\n    forward . %s\n}\n", c.ExternalDomain, bind, c.ExternalDNS)
	fmt.Fprintf(&b, ".:53 {\n%s    template ANY ANY {\n        rcode NXDOMAIN\n    }\n}\n", bind)
	return b.String()
}
