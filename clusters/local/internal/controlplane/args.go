package controlplane

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// controllers are the kube-controller-manager controllers a conformance run
// needs; the rest stay off to save memory and CPU. node-lifecycle-controller
// must be on: admission taints every new node not-ready and only it lifts
// the taint.
var controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"endpointslice-controller", "endpoints-controller",
	"serviceaccount-controller", "serviceaccount-token-controller", "root-ca-certificate-publisher-controller",
	"namespace-controller", "garbage-collector-controller", "node-lifecycle-controller",
	"taint-eviction-controller", "pod-garbage-collector-controller",
}

// goEnv is the Go runtime's memory settings per component. GOGC=50 (25 for
// the API server) collects at 1.5× (1.25×) the live heap instead of 2×.
// GOMEMLIMIT is a soft ceiling the collector defends by collecting
// continuously once the live heap nears it: each limit sits well above its
// component's live heap, except that the API server has none. Its heap
// grows to about 100 MiB with a cell deployed, and a 96 MiB limit kept its
// collector running without pause: 1.2 of the machine's 2 cores for three
// idle API servers (measured with `perf` and /proc, see
// docs/performance.md), which slowed every case.
var goEnv = map[string][]string{
	"etcd":                    {"GOMEMLIMIT=32MiB", "GOGC=50"},
	"kube-apiserver":          {"GOGC=25"},
	"kube-controller-manager": {"GOMEMLIMIT=32MiB", "GOGC=50"},
	"kube-scheduler":          {"GOMEMLIMIT=24MiB", "GOGC=50"},
	"coredns":                 {"GOMEMLIMIT=24MiB", "GOGC=50"},
}

func etcdArgs(c plan.Cluster, p *PKI, dataDir string) []string {
	client := fmt.Sprintf("https://127.0.0.1:%d", c.EtcdClientPort())
	peer := fmt.Sprintf("https://127.0.0.1:%d", c.EtcdPeerPort())
	return []string{
		"--name=" + c.Name, "--data-dir=" + dataDir,
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + c.Name + "=" + peer, "--initial-cluster-state=new",
		"--cert-file=" + p.EtcdCert, "--key-file=" + p.EtcdKey, "--trusted-ca-file=" + p.CACert, "--client-cert-auth",
		"--peer-cert-file=" + p.EtcdCert, "--peer-key-file=" + p.EtcdKey, "--peer-trusted-ca-file=" + p.CACert, "--peer-client-cert-auth",
		"--listen-metrics-urls=", "--quota-backend-bytes=1073741824",
		// A test cluster writes little: keep fewer raft entries in memory
		// between snapshots (the default is 10000).
		"--snapshot-count=1000",
		"--log-level=warn",
	}
}

func apiserverArgs(c plan.Cluster, p *PKI) []string {
	return []string{
		fmt.Sprintf("--etcd-servers=https://127.0.0.1:%d", c.EtcdClientPort()),
		"--etcd-cafile=" + p.CACert, "--etcd-certfile=" + p.EtcdClientCert, "--etcd-keyfile=" + p.EtcdClientKey,
		// The bridge address rather than 0.0.0.0: the host reaches it over
		// lo and the cluster's pods over their bridge (KUBERNETES_SERVICE_HOST);
		// the nftables table refuses it from every other interface.
		"--bind-address=" + c.BridgeIP().String(), fmt.Sprintf("--secure-port=%d", c.APIServerPort()),
		"--advertise-address=" + c.BridgeIP().String(),
		"--tls-cert-file=" + p.APIServerCert, "--tls-private-key-file=" + p.APIServerKey,
		"--client-ca-file=" + p.CACert,
		"--kubelet-certificate-authority=" + p.CACert,
		"--kubelet-client-certificate=" + p.KubeletClientCert, "--kubelet-client-key=" + p.KubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc." + plan.ClusterDomain,
		"--service-account-key-file=" + p.SAPub, "--service-account-signing-key-file=" + p.SAKey,
		"--service-cluster-ip-range=" + c.ServicePrefix().String(),
		"--anonymous-auth=false",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--watch-cache=false", "--profiling=false", "--enable-priority-and-fairness=false",
		"--event-ttl=1h", "--v=1",
		"--runtime-config=" + strings.Join(runtimeConfig, ","),
	}
}

// runtimeConfig turns off the API groups nothing here uses (autoscaling,
// flow control, …), which saves API server memory; the scheduler's and
// controllers' informers need the ones left on.
var runtimeConfig = []string{
	"api/all=false", "api/v1=true", "apps/v1=true", "discovery.k8s.io/v1=true", "coordination.k8s.io/v1=true",
	"events.k8s.io/v1=true", "storage.k8s.io/v1=true", "authentication.k8s.io/v1=true",
	"authorization.k8s.io/v1=true", "rbac.authorization.k8s.io/v1=true", "admissionregistration.k8s.io/v1=true",
	"policy/v1=true", "batch/v1=true", "networking.k8s.io/v1=true", "resource.k8s.io/v1=true",
	"scheduling.k8s.io/v1=true", "node.k8s.io/v1=true", "certificates.k8s.io/v1=true",
	"apiextensions.k8s.io/v1=true", "apiregistration.k8s.io/v1=true",
}

func controllerManagerArgs(p *PKI, kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		// Each controller acts through its own service account in
		// kube-system, with the bootstrap policy's system:controller:* role.
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + p.SAKey, "--root-ca-file=" + p.CACert,
		"--cluster-signing-cert-file=" + p.CACert, "--cluster-signing-key-file=" + p.CAKey,
		"--leader-elect=false", "--secure-port=0", "--profiling=false",
		"--kube-api-qps=100", "--kube-api-burst=200",
		"--concurrent-statefulset-syncs=5", "--node-monitor-period=2s", "--v=1",
	}
}

func schedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0", "--profiling=false",
		"--kube-api-qps=100", "--kube-api-burst=200", "--v=1",
	}
}

// corefile renders CoreDNS's configuration: the cluster domain from the
// API, the external domain forwarded to the agent's DNS, and NXDOMAIN for
// everything else (nothing leaves the machine).
func corefile(c plan.Cluster, kubeconfig, domain string) string {
	bind := c.BridgeIP().String()
	return fmt.Sprintf(`%[1]s:53 in-addr.arpa:53 ip6.arpa:53 {
    bind %[2]s
    errors
    kubernetes %[1]s in-addr.arpa ip6.arpa {
        kubeconfig %[3]s %[4]s
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
%[5]s:53 {
    bind %[2]s
    errors
    forward . %[6]s
    cache 5
}
.:53 {
    bind %[2]s
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`, plan.ClusterDomain, bind, kubeconfig, c.Name, domain, c.Env.ExternalDNS().String())
}

func logPath(dir, cluster, component string) string {
	return filepath.Join(dir, cluster+"-"+component+".log")
}
