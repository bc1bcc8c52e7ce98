package controlplane

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nvcf/conformance/clusters/internal/corefile"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// controllers are the kube-controller-manager controllers a conformance run
// needs; the rest stay off to save memory and CPU. node-lifecycle-controller
// must be on: admission taints every new node not-ready and only it lifts
// the taint. endpoints-controller is off: everything here (Stargate, the
// router, the load balancers, CoreDNS) reads EndpointSlices, and the API
// server keeps the kubernetes Service's Endpoints itself.
var controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"endpointslice-controller",
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
		"--watch-cache=true", "--watch-cache-sizes=" + strings.Join(uncached, ","),
		"--profiling=false", "--enable-priority-and-fairness=false",
		"--event-ttl=1h", "--v=1",
		"--runtime-config=" + strings.Join(runtimeConfig, ","),
	}
}

// uncached are the resources the API server keeps no watch cache for
// (size 0): every resource of runtimeConfig's groups except pods, Secrets
// and ConfigMaps. Those three are cached because they are read most: each
// process kubelet, the controllers and the scheduler watch pods, each
// running pod's kubelet watches the Secrets and ConfigMaps it mounts, and
// the scenarios list pods while they wait. Without a cache every watcher
// has an etcd watch of its own that decodes every event again (the trust
// bundle ConfigMap is 224 KB), and every list reads etcd; with one, an
// event is decoded once and a list is answered from memory. The others
// stay uncached for the memory a cache per resource costs.
var uncached = []string{
	"bindings#0", "componentstatuses#0", "endpoints#0", "events#0", "limitranges#0", "namespaces#0", "nodes#0",
	"persistentvolumeclaims#0", "persistentvolumes#0", "podtemplates#0", "replicationcontrollers#0",
	"resourcequotas#0", "serviceaccounts#0", "services#0",
	"controllerrevisions.apps#0", "daemonsets.apps#0", "deployments.apps#0", "replicasets.apps#0", "statefulsets.apps#0",
	"endpointslices.discovery.k8s.io#0", "leases.coordination.k8s.io#0", "events.events.k8s.io#0",
	"csidrivers.storage.k8s.io#0", "csinodes.storage.k8s.io#0", "csistoragecapacities.storage.k8s.io#0",
	"storageclasses.storage.k8s.io#0", "volumeattachments.storage.k8s.io#0", "volumeattributesclasses.storage.k8s.io#0",
	"clusterroles.rbac.authorization.k8s.io#0", "clusterrolebindings.rbac.authorization.k8s.io#0",
	"roles.rbac.authorization.k8s.io#0", "rolebindings.rbac.authorization.k8s.io#0",
	"mutatingwebhookconfigurations.admissionregistration.k8s.io#0", "validatingwebhookconfigurations.admissionregistration.k8s.io#0",
	"validatingadmissionpolicies.admissionregistration.k8s.io#0", "validatingadmissionpolicybindings.admissionregistration.k8s.io#0",
	"mutatingadmissionpolicies.admissionregistration.k8s.io#0", "mutatingadmissionpolicybindings.admissionregistration.k8s.io#0",
	"poddisruptionbudgets.policy#0", "jobs.batch#0", "cronjobs.batch#0",
	"ingresses.networking.k8s.io#0", "ingressclasses.networking.k8s.io#0", "networkpolicies.networking.k8s.io#0",
	"ipaddresses.networking.k8s.io#0", "servicecidrs.networking.k8s.io#0",
	"deviceclasses.resource.k8s.io#0", "resourceclaims.resource.k8s.io#0", "resourceclaimtemplates.resource.k8s.io#0",
	"resourceslices.resource.k8s.io#0", "priorityclasses.scheduling.k8s.io#0", "runtimeclasses.node.k8s.io#0",
	"certificatesigningrequests.certificates.k8s.io#0", "clustertrustbundles.certificates.k8s.io#0",
	"podcertificaterequests.certificates.k8s.io#0", "devicetaintrules.resource.k8s.io#0",
	"customresourcedefinitions.apiextensions.k8s.io#0",
	"apiservices.apiregistration.k8s.io#0",
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

// Corefile is CoreDNS's configuration for cluster c: the shared policy
// (corefile.Render), run in the host namespace on the cluster's bridge
// address, reaching the API through kubeconfig, forwarding the topology's
// domain to the agent's external DNS.
func Corefile(c plan.Cluster, kubeconfig, domain string) string {
	return corefile.Render(corefile.Config{
		ClusterDomain: plan.ClusterDomain, ExternalDomain: domain, ExternalDNS: c.Env.ExternalDNS(),
		Bind: c.BridgeIP(), Kubeconfig: kubeconfig, Context: c.Name,
	})
}

func logPath(dir, cluster, component string) string {
	return filepath.Join(dir, cluster+"-"+component+".log")
}
