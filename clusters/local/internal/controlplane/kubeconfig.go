package controlplane

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Access is how one cluster is reached with admin rights.
type Access struct {
	// Name is the cluster, context and user name.
	Name string
	// Server is the API server URL.
	Server string
	// CACert, ClientCert and ClientKey are file paths.
	CACert, ClientCert, ClientKey string
}

// WriteKubeconfig writes a kubeconfig (0600) with one context per entry,
// named after it, credentials embedded; the first is the current context.
func WriteKubeconfig(path string, entries ...Access) error {
	cfg := clientcmdapi.NewConfig()
	for _, a := range entries {
		ca, err := os.ReadFile(a.CACert)
		if err != nil {
			return fmt.Errorf("kubeconfig %s: %w", path, err)
		}
		crt, err := os.ReadFile(a.ClientCert)
		if err != nil {
			return fmt.Errorf("kubeconfig %s: %w", path, err)
		}
		key, err := os.ReadFile(a.ClientKey)
		if err != nil {
			return fmt.Errorf("kubeconfig %s: %w", path, err)
		}
		cfg.Clusters[a.Name] = &clientcmdapi.Cluster{Server: a.Server, CertificateAuthorityData: ca}
		cfg.AuthInfos[a.Name] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
		cfg.Contexts[a.Name] = &clientcmdapi.Context{Cluster: a.Name, AuthInfo: a.Name}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = a.Name
		}
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}
