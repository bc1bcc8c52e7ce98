package kubelet

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// Config is one node's kubelet.
type Config struct {
	// Kubeconfig is the path of the kubeconfig to reach the apiserver with;
	// Context picks its context ("" = current). Required.
	Kubeconfig, Context string
	// NodeName is the node to register, e.g. "region-a-node-0". Required.
	NodeName string
	// Network is the cluster's pod network. Required.
	Network *podnet.Cluster
	// DNS is the cluster DNS server written into pods' resolv.conf
	// (dnsPolicy ClusterFirst); default Network.Gateway().
	DNS netip.Addr
	// ClusterDomain is the cluster's DNS domain; default "cluster.local".
	ClusterDomain string
	// Images maps an image to a local binary. Keys are matched against the
	// full reference ("nvcf-ref:dev"), then the repository without tag or
	// digest ("registry.example/x/nvcf-ref"), then its last path element
	// ("nvcf-ref"). An unmapped image fails the pod with ErrImagePull.
	Images map[string]string
	// Dir holds the node's pod folders (volumes, logs). Required.
	Dir string
	// APIServer is what pods get as KUBERNETES_SERVICE_HOST/PORT; default
	// Network.Gateway():6443+index.
	APIServer netip.AddrPort
	// KubeletPort is where the node's kubelet API listens, on the gateway
	// address; default 10250. Give each node of a cluster its own.
	KubeletPort int
	// TLS secures the kubelet API; when all empty the API is not served and
	// `kubectl logs` cannot reach the node.
	TLS TLS
	// BackoffBase and BackoffMax bound the restart back-off (default 10s and
	// 5m, the kubelet's); BackoffReset is how long a container must run for
	// its back-off to start over (default 10m).
	BackoffBase, BackoffMax, BackoffReset time.Duration
	// VolumeResync is how often Secret, ConfigMap and projected volumes of
	// running pods are refreshed besides on every change of an object they
	// mount (volwatch.go); default 1m, the kubelet's sync period: the
	// watches carry the changes, the resync is only the safety net.
	VolumeResync time.Duration
	// Log receives the node's log (give it the node name); nil discards.
	Log *slog.Logger
}

// TLS names the kubelet API's serving certificate and the CA its clients
// (the apiserver's --kubelet-client-certificate) must chain to.
type TLS struct {
	// CertFile and KeyFile: a serving certificate whose SANs include the
	// cluster gateway IP (the node's InternalIP).
	CertFile, KeyFile string
	// ClientCAFile verifies client certificates; clients without one are refused.
	ClientCAFile string
}

func (t TLS) enabled() bool { return t.CertFile != "" || t.KeyFile != "" || t.ClientCAFile != "" }

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Kubeconfig == "" {
		errs = append(errs, errors.New("Kubeconfig is required"))
	}
	if c.NodeName == "" {
		errs = append(errs, errors.New("NodeName is required"))
	}
	if c.Network == nil {
		errs = append(errs, errors.New("Network is required (podnet.SetupCluster)"))
	}
	if c.Dir == "" {
		errs = append(errs, errors.New("Dir is required (the node's pod folders)"))
	}
	if c.TLS.enabled() && (c.TLS.CertFile == "" || c.TLS.KeyFile == "" || c.TLS.ClientCAFile == "") {
		errs = append(errs, errors.New("TLS needs CertFile, KeyFile and ClientCAFile together"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("kubelet config: %w", err)
	}
	if !c.DNS.IsValid() {
		c.DNS = c.Network.Gateway()
	}
	if c.ClusterDomain == "" {
		c.ClusterDomain = "cluster.local"
	}
	if !c.APIServer.IsValid() {
		c.APIServer = netip.AddrPortFrom(c.Network.Gateway(), uint16(6443+c.Network.Index()))
	}
	if c.KubeletPort == 0 {
		c.KubeletPort = 10250
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 10 * time.Second
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 5 * time.Minute
	}
	if c.BackoffReset <= 0 {
		c.BackoffReset = 10 * time.Minute
	}
	if c.VolumeResync <= 0 {
		c.VolumeResync = time.Minute
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
