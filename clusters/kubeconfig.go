package clusters

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig loads one context of a kubeconfig file (the file's current
// context when context is empty). It is the one kubeconfig loader of the
// harness: the provider, the deployer, faults and the CLI all use it.
func RESTConfig(kubeconfig, context string) (*rest.Config, error) {
	if kubeconfig == "" {
		return nil, fmt.Errorf("no kubeconfig given; pass the environment's kubeconfig (harness status prints it)")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s context %q: %w", kubeconfig, context, err)
	}
	return cfg, nil
}

// Client returns a clientset for one context of a kubeconfig file.
func Client(kubeconfig, context string) (kubernetes.Interface, error) {
	cfg, err := RESTConfig(kubeconfig, context)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for kubeconfig %s context %q: %w", kubeconfig, context, err)
	}
	return cs, nil
}

// RESTConfig returns the client configuration of the named cluster.
func (e *Environment) RESTConfig(cluster string) (*rest.Config, error) {
	c, ok := e.Cluster(cluster)
	if !ok {
		return nil, fmt.Errorf("environment %q has no cluster %q", e.Name, cluster)
	}
	return RESTConfig(e.Kubeconfig, c.Context)
}

// Client returns a clientset for the named cluster.
func (e *Environment) Client(cluster string) (kubernetes.Interface, error) {
	c, ok := e.Cluster(cluster)
	if !ok {
		return nil, fmt.Errorf("environment %q has no cluster %q", e.Name, cluster)
	}
	return Client(e.Kubeconfig, c.Context)
}
