// Package clusters defines the provider interface that brings up the
// clusters of a topology, and the values it hands back: an Environment with
// one kubeconfig context per cluster and the external addresses of its load
// balancers. Implementations live under clusters/internal; the embedded
// default is reached through package clusters/local.
//
// Code downstream of a provider (deployment, scenarios) takes a kubeconfig
// path and a context name and knows nothing of the provider that made them.
package clusters
