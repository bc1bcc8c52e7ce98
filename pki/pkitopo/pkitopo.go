// Package pkitopo turns a topology into the plain pki.Request that package
// pki mints from, so that pki itself never depends on the topology model.
package pkitopo

import (
	"time"

	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
)

// ClientName is the mutual-TLS client identity (CN and SAN) of the Pylons
// of a workers cluster: "pylon.<cluster>.<domain>".
func ClientName(t *topology.Topology, cluster string) string { return "pylon." + t.Zone(cluster) }

// Request lists the names of t: per stargate cluster, the ingress dial hosts
// (gRPC, then HTTP), the identity wildcard as the authority carried through
// the ingress (which its certificate does not cover), and the
// QUIC relay's names (the identity wildcard, which covers every per-pod SNI
// name, then the relay's dial host); per workers cluster, one client
// identity. validity zero means pki.DefaultValidity.
func Request(t *topology.Topology, validity time.Duration, intermediate bool) pki.Request {
	r := pki.Request{Validity: validity, Intermediate: intermediate}
	for _, c := range t.ByRole(topology.RoleStargate) {
		r.Clusters = append(r.Clusters, pki.ClusterNames{
			Name:        c.Name,
			DialHosts:   []string{t.GRPCHost(c.Name), t.HTTPHost(c.Name)},
			Authorities: []string{t.IdentityWildcard(c.Name)},
			QUICNames:   []string{t.IdentityWildcard(c.Name), t.QUICHost(c.Name)},
		})
	}
	for _, c := range t.ByRole(topology.RoleWorkers) {
		r.Clients = append(r.Clients, pki.ClientIdentity{Cluster: c.Name, Name: ClientName(t, c.Name)})
	}
	return r
}
