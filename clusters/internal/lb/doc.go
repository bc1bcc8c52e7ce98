// Package lb serves a cluster's Services on the embedded provider, as
// cloud-provider-kind does for kind: a controller (client-go informers on
// Services and EndpointSlices) gives every Service of type LoadBalancer an
// address from the cluster's pool 198.19.(100+i).0/24, puts it on the
// host's lo as a /32, listens there on each port (TCP and/or UDP) and
// forwards to the ready endpoints of the Service's EndpointSlices,
// round-robin; UDP keeps one upstream socket per client (a session, idle
// timeout), which QUIC needs. It sets status.loadBalancer.ingress and
// registers the hostnames of the annotation
// clusters.ExternalHostnamesAnnotation in the external DNS.
//
// The same forwarders also serve every Service's ClusterIP (added to lo as
// a /32), so pods that dial a Service DNS name work without kube-proxy.
// Listeners and addresses go away with their Service, and when Run returns.
//
// With Config.NodePorts the forwarders go to the Service's NodePort on
// every node's InternalIP instead, and no ClusterIP is served: the mode for
// clusters whose nodes are containers running their own kube-proxy (kind),
// which the host reaches while it does not reach their pods.
//
// All traffic between clusters crosses these listeners; the fault injector
// acts on it with nftables redirects in front of them (see faults.Path).
package lb
