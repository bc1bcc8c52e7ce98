package kubelet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/log"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"

	"github.com/nvcf/conformance/clusters"
)

// Version is the kubelet version the node reports.
const Version = "v1.37.2-nvcf-process"

// Run registers the node and runs the pods scheduled to it until ctx is
// done; then it stops every pod (SIGTERM, grace period, SIGKILL; at most
// 30 s in all) and removes their namespaces. The node turns Ready in the
// API once the pod and node controllers run.
func Run(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	client, err := newClient(cfg.Kubeconfig, cfg.Context)
	if err != nil {
		return err
	}
	logger := cfg.Log // the caller names the node in it (H4: node=<name>)
	p := &provider{cfg: cfg, log: logger, obj: apiObjects{client: client}, client: client, pods: map[string]*podRuntime{},
		capacity: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse(strconv.Itoa(max(runtime.NumCPU(), 8))),
			corev1.ResourceMemory:           resource.MustParse("32Gi"),
			corev1.ResourcePods:             resource.MustParse("110"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		}}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("kubelet dir: %w", err)
	}

	mux := http.NewServeMux()
	opts := nodeOpts(cfg, p, client, mux)
	n, err := nodeutil.NewNode(cfg.NodeName, func(nodeutil.ProviderConfig) (nodeutil.Provider, node.NodeProvider, error) {
		return p, nil, nil
	}, opts...)
	if err != nil {
		return fmt.Errorf("node %s: %w", cfg.NodeName, err)
	}
	runCtx := log.WithLogger(ctx, vkLogger{l: logger.With("component", "virtual-kubelet")})
	logger.Info("kubelet starting", "kubelet-api", cfg.TLS.enabled(), "port", cfg.KubeletPort)
	err = n.Run(runCtx)

	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.stopAll(stopCtx)
	logger.Info("kubelet stopped")
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return fmt.Errorf("node %s: %w", cfg.NodeName, err)
	}
	return nil
}

// nodeOpts configure virtual-kubelet's node for p: the client, the Node
// object, the kubelet API on the gateway address, the pod status queue's
// pacing (paceStatusUpdates) and, when configured, TLS.
func nodeOpts(cfg Config, p *provider, client kubernetes.Interface, mux *http.ServeMux) []nodeutil.NodeOpt {
	opts := []nodeutil.NodeOpt{
		nodeutil.WithClient(vkClient{client}),
		func(nc *nodeutil.NodeConfig) error {
			nc.NodeSpec = nodeSpec(cfg, p.capacity)
			nc.HTTPListenAddr = net.JoinHostPort(cfg.Network.Gateway().String(), strconv.Itoa(cfg.KubeletPort))
			nc.NumWorkers = 4
			nc.SkipDownwardAPIResolution = true // containerEnv resolves it, with the pod IP
			nc.Handler = mux
			return nil
		},
		nodeutil.AttachProviderRoutes(mux),
		nodeutil.WithPodControllerConfigOverrides(paceStatusUpdates),
	}
	if cfg.TLS.enabled() {
		opts = append(opts, nodeutil.WithTLSConfig(
			nodeutil.WithKeyPairFromPath(cfg.TLS.CertFile, cfg.TLS.KeyFile),
			nodeutil.WithCAFromPath(cfg.TLS.ClientCAFile),
			func(c *tls.Config) error { c.MinVersion = tls.VersionTLS12; return nil },
		))
	}
	return opts
}

// paceStatusUpdates gives virtual-kubelet's queue of pod status updates a
// back-off per pod only, and no limit on retries. Its default limiter adds
// a token bucket shared by every pod of the node (10 per second, burst
// 100) that each enqueue pays into, whether or not anything failed. A
// burst of pod changes (a rollout: every pod reports five or six) runs up
// a debt of seconds, which delays each pod's next write; a pod's last
// change, which no later notification pulls forward, then reached the API
// seconds to a minute late: a container that exited showed as running.
// A failed write (a conflict: the controller's lister trails its own
// writes) still backs off, per pod, from 5 ms to at most statusRetryMax,
// and is retried until it lands or the pod is gone instead of being
// dropped after 20 attempts.
func paceStatusUpdates(c *node.PodControllerConfig) error {
	c.SyncPodStatusFromProviderRateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[any](5*time.Millisecond, statusRetryMax)
	c.SyncPodStatusFromProviderShouldRetryFunc = func(context.Context, string, int, time.Time, error) (*time.Duration, error) {
		return nil, nil // the limiter's back-off
	}
	return nil
}

// statusRetryMax bounds the back-off between attempts of one pod's status
// write.
const statusRetryMax = 10 * time.Second

func newClient(kubeconfig, kctx string) (kubernetes.Interface, error) {
	rc, err := clusters.RESTConfig(kubeconfig, kctx)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 50, 100
	rc.UserAgent = "nvcf-process-kubelet"
	return kubernetes.NewForConfig(rc)
}

// nodeSpec is the Node the kubelet registers: its InternalIP is the
// cluster gateway and its kubelet endpoint the configured port.
func nodeSpec(cfg Config, capacity corev1.ResourceList) corev1.Node {
	gw := cfg.Network.Gateway().String()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		now := metav1.Now()
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: cfg.NodeName,
			Labels: map[string]string{
				// No kubernetes.io/role: NodeRestriction refuses a node
				// that sets a kubernetes.io label outside the kubelet's set.
				"type":                   "virtual-kubelet",
				"kubernetes.io/hostname": cfg.NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     runtime.GOARCH,
				"nvcf.conformance/node":  "process",
			},
		},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodePending,
			Capacity:    capacity,
			Allocatable: capacity,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: gw},
				{Type: corev1.NodeHostName, Address: cfg.NodeName},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(cfg.KubeletPort)}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: Version, OperatingSystem: "linux", Architecture: runtime.GOARCH,
				ContainerRuntimeVersion: "nvcf-process://1", OSImage: "nvcf process kubelet",
			},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletStarting"),
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
				cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "RouteCreated"),
			},
		},
	}
}
