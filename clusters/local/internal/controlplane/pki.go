package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// PKI is the file paths of one cluster's certificates and keys. Keys are
// written 0600.
type PKI struct {
	Dir string
	// CA signs every certificate of the cluster and is the client CA of the
	// API server and the kubelets.
	CACert, CAKey string
	// APIServerCert serves the API on 127.0.0.1, the bridge address and the
	// kubernetes Service IP.
	APIServerCert, APIServerKey string
	// AdminCert is a system:masters client certificate: the harness's and
	// the user's kubeconfig, nothing else.
	AdminCert, AdminKey string
	// ControllerManagerCert (system:kube-controller-manager) and
	// SchedulerCert (system:kube-scheduler) are the identities the API
	// server's bootstrap RBAC policy grants those components.
	ControllerManagerCert, ControllerManagerKey string
	SchedulerCert, SchedulerKey                 string
	// CoreDNSCert and LBCert are the identities of CoreDNS and the agent's
	// load-balancer controller, bound to the ClusterRoles of rbac.go.
	CoreDNSCert, CoreDNSKey string
	LBCert, LBKey           string
	// EtcdCert serves etcd and is its peer certificate; EtcdClientCert is the API server's.
	EtcdCert, EtcdKey, EtcdClientCert, EtcdClientKey string
	// KubeletClientCert is what the API server presents to kubelets (logs, exec).
	KubeletClientCert, KubeletClientKey string
	// SAKey signs service-account tokens; SAPub verifies them.
	SAKey, SAPub string
	// NodeCerts[n] and NodeKeys[n] serve node n's kubelet API (IP SAN: the
	// bridge address) and are its client identity, system:node:<name> in
	// system:nodes, which the Node authorizer confines to its own pods.
	NodeCerts, NodeKeys []string
}

// MintPKI writes a fresh CA and every certificate cluster c needs into dir.
func MintPKI(dir string, c plan.Cluster, nodes int) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki dir %s: %w", dir, err)
	}
	ca, err := newCA("nvcf-harness " + c.Name + " CA")
	if err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir}
	if p.CACert, p.CAKey, err = ca.write(dir, "ca"); err != nil {
		return nil, err
	}
	loop := net.IPv4(127, 0, 0, 1)
	bridge := net.IP(c.BridgeIP().AsSlice())
	svc := net.IP(c.KubernetesServiceIP().AsSlice())
	leafs := []struct {
		name     string
		req      certRequest
		crt, key *string
	}{
		{"apiserver", certRequest{cn: "kube-apiserver", server: true, ips: []net.IP{loop, bridge, svc},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc." + plan.ClusterDomain}}, &p.APIServerCert, &p.APIServerKey},
		{"admin", certRequest{cn: "nvcf-harness-admin", org: []string{"system:masters"}, client: true}, &p.AdminCert, &p.AdminKey},
		{"etcd", certRequest{cn: "etcd", server: true, client: true, ips: []net.IP{loop}, dns: []string{"localhost"}}, &p.EtcdCert, &p.EtcdKey},
		{"etcd-client", certRequest{cn: "kube-apiserver-etcd-client", client: true}, &p.EtcdClientCert, &p.EtcdClientKey},
		{"kubelet-client", certRequest{cn: "kube-apiserver-kubelet-client", org: []string{"system:masters"}, client: true}, &p.KubeletClientCert, &p.KubeletClientKey},
		{"kube-controller-manager", certRequest{cn: "system:kube-controller-manager", client: true}, &p.ControllerManagerCert, &p.ControllerManagerKey},
		{"kube-scheduler", certRequest{cn: "system:kube-scheduler", client: true}, &p.SchedulerCert, &p.SchedulerKey},
		{"coredns", certRequest{cn: CoreDNSUser, client: true}, &p.CoreDNSCert, &p.CoreDNSKey},
		{"load-balancer-controller", certRequest{cn: LBUser, client: true}, &p.LBCert, &p.LBKey},
	}
	for _, l := range leafs {
		kp, err := ca.issue(l.req)
		if err != nil {
			return nil, err
		}
		if *l.crt, *l.key, err = kp.write(dir, l.name); err != nil {
			return nil, err
		}
	}
	for n := range nodes {
		name := c.NodeName(n)
		kp, err := ca.issue(certRequest{cn: "system:node:" + name, org: []string{"system:nodes"}, server: true, client: true,
			ips: []net.IP{bridge, loop}, dns: []string{name}})
		if err != nil {
			return nil, err
		}
		crt, key, err := kp.write(dir, name)
		if err != nil {
			return nil, err
		}
		p.NodeCerts, p.NodeKeys = append(p.NodeCerts, crt), append(p.NodeKeys, key)
	}
	sa, err := newCA("service-account-signer") // only its key pair is used
	if err != nil {
		return nil, err
	}
	if p.SAKey, p.SAPub, err = writeKey(dir, "sa", sa); err != nil {
		return nil, err
	}
	return p, nil
}

// writeKey writes the private key of kp as sa.key and its public key as sa.pub.
func writeKey(dir, name string, kp *keyPair) (key, pub string, err error) {
	k, err := kp.keyPEM()
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKIXPublicKey(&kp.key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("marshal public key %s: %w", name, err)
	}
	key, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(key, k, 0o600); err != nil {
		return "", "", fmt.Errorf("write %s: %w", key, err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		return "", "", fmt.Errorf("write %s: %w", pub, err)
	}
	return key, pub, nil
}
