package topology

import "strings"

// The external names of a cluster. Every consumer (PKI, manifests, the
// external DNS, probes) derives names here, so they cannot drift apart.

// Zone is the DNS zone of a cluster's external names: "<cluster>.<domain>".
func (t *Topology) Zone(cluster string) string { return cluster + "." + t.Domain }

// GRPCHost is the external dial hostname of a stargate cluster's TLS ingress
// (gRPC, port 50071); certificates and SNI use it.
func (t *Topology) GRPCHost(cluster string) string { return "stargate." + t.Zone(cluster) }

// QUICHost is the external dial hostname of the cluster's QUIC relay (UDP 50072).
func (t *Topology) QUICHost(cluster string) string { return "quic." + t.Zone(cluster) }

// HTTPHost is the external hostname of the cluster's Stargate HTTP (port 8000).
func (t *Topology) HTTPHost(cluster string) string { return "invoke." + t.Zone(cluster) }

// IdentityTemplate is the advertised hostname template of a cluster's
// Stargates: the router maps "{pod_name}" in it to a pod. The same name is
// the :authority of gRPC and the SNI of reverse QUIC.
func (t *Topology) IdentityTemplate(cluster string) string { return "{pod_name}.sg." + t.Zone(cluster) }

// IdentityWildcard is the certificate name covering every identity of a cluster.
func (t *Topology) IdentityWildcard(cluster string) string {
	return strings.Replace(t.IdentityTemplate(cluster), "{pod_name}", "*", 1)
}

// Identity renders the identity of one Stargate pod.
func (t *Topology) Identity(cluster, pod string) string {
	return strings.Replace(t.IdentityTemplate(cluster), "{pod_name}", pod, 1)
}
