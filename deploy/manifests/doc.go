// Package manifests holds the Kubernetes manifests that deploy the
// reference components as a user would deploy them, as embedded YAML
// templates (//go:embed), and renders them from chart-like Values into
// typed objects decoded with the client-go scheme.
//
// A stargate-role cluster gets: namespace nvcf, RBAC for EndpointSlice
// reads, Stargate as a StatefulSet or a Deployment (one template, the
// workload.kind switch), the headless Service stargate-headless, the
// backend router (also the QUIC relay), the TLS ingress, and LoadBalancer
// Services for gRPC (50071), QUIC (UDP 50072) and HTTP (8000). A workers
// cluster gets Pylon beside the echo inference server, one Deployment per
// Pylon (the base one and scenario variants). Secrets and ConfigMaps with
// PKI material are built by deploy; the pods mount them at the
// fixed paths of names.go.
package manifests
