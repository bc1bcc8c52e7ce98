package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block, path)
	c, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return c
}

func TestMintPKI(t *testing.T) {
	c := plan.For(2, "region-c")
	p, err := MintPKI(t.TempDir(), c, 2)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, p.CACert))

	api := readCert(t, p.APIServerCert)
	for _, host := range []string{"127.0.0.1", "198.18.12.1", "198.19.12.1", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		_, err := api.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
		require.NoError(t, err, "API server certificate for %s", host)
	}
	_, err = api.Verify(x509.VerifyOptions{Roots: roots, DNSName: "198.18.10.1"})
	require.Error(t, err, "another cluster's bridge address")

	admin := readCert(t, p.AdminCert)
	_, err = admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	require.Equal(t, []string{"system:masters"}, admin.Subject.Organization)

	require.Len(t, p.NodeCerts, 2)
	node := readCert(t, p.NodeCerts[1])
	_, err = node.Verify(x509.VerifyOptions{Roots: roots, DNSName: "198.18.12.1"})
	require.NoError(t, err, "kubelet serving certificate for the node's InternalIP")
	require.Equal(t, "system:node:region-c-node-1", node.Subject.CommonName)

	for path, want := range map[string]string{
		p.ControllerManagerCert: "system:kube-controller-manager", p.SchedulerCert: "system:kube-scheduler",
		p.CoreDNSCert: CoreDNSUser, p.LBCert: LBUser,
	} {
		c := readCert(t, path)
		require.Equal(t, want, c.Subject.CommonName)
		require.Empty(t, c.Subject.Organization, "%s must not be in system:masters", want)
		_, err = c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		require.NoError(t, err)
	}
	require.Equal(t, []string{"system:nodes"}, node.Subject.Organization)

	for _, key := range append([]string{p.CAKey, p.APIServerKey, p.AdminKey, p.EtcdKey, p.EtcdClientKey, p.SAKey, p.KubeletClientKey,
		p.ControllerManagerKey, p.SchedulerKey, p.CoreDNSKey, p.LBKey}, p.NodeKeys...) {
		fi, err := os.Stat(key)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), key)
	}
}

// A real mutual-TLS handshake: the API server's certificate serves, the
// admin certificate authenticates, both verified against the cluster CA.
func TestPKIHandshake(t *testing.T) {
	p, err := MintPKI(t.TempDir(), plan.For(0, "a"), 1)
	require.NoError(t, err)
	ca, err := os.ReadFile(p.CACert)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	srvCert, err := tls.LoadX509KeyPair(p.APIServerCert, p.APIServerKey)
	require.NoError(t, err)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.WriteString(c, "hello")
			c.Close()
		}
	}()
	cliCert, err := tls.LoadX509KeyPair(p.AdminCert, p.AdminKey)
	require.NoError(t, err)
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cliCert}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	got, err := io.ReadAll(conn)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	require.Equal(t, "127.0.0.1", conn.ConnectionState().PeerCertificates[0].IPAddresses[0].String())
}

func TestWriteKubeconfigOneContextPerCluster(t *testing.T) {
	dir := t.TempDir()
	var access []Access
	for i, name := range []string{"region-a", "region-b"} {
		c := plan.For(i, name)
		p, err := MintPKI(dir+"/"+name, c, 1)
		require.NoError(t, err)
		access = append(access, Access{Name: name, Server: "https://127.0.0.1:" + itoa(c.APIServerPort()), CACert: p.CACert, ClientCert: p.AdminCert, ClientKey: p.AdminKey})
	}
	path := dir + "/kubeconfig"
	require.NoError(t, WriteKubeconfig(path, access...))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	cfg, err := clientcmd.LoadFromFile(path)
	require.NoError(t, err)
	require.Equal(t, "region-a", cfg.CurrentContext)
	require.Equal(t, "https://127.0.0.1:6444", cfg.Clusters[cfg.Contexts["region-b"].Cluster].Server)
	require.NotEmpty(t, cfg.AuthInfos["region-b"].ClientCertificateData)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCorefile(t *testing.T) {
	cf := Corefile(plan.For(1, "region-b"), "/s/kubeconfig", "nvcf.test")
	require.Contains(t, cf, "bind 198.18.11.1")
	require.Contains(t, cf, "kubeconfig /s/kubeconfig region-b")
	require.Contains(t, cf, "nvcf.test:53 {")
	require.Contains(t, cf, "forward . 127.0.0.88:53")
	require.NotContains(t, cf, "endpoint_pod_names", "Deployment pods must keep upstream's dashed-IP SRV targets")
	require.Contains(t, cf, "rcode NXDOMAIN", "names outside the cluster and the topology domain must not leave the machine")
}

func TestArgs(t *testing.T) {
	p := &PKI{CACert: "/p/ca.crt", SAKey: "/p/sa.key", SAPub: "/p/sa.pub"}
	api := strings.Join(apiserverArgs(plan.For(1, "b"), p), " ")
	require.Contains(t, api, "--secure-port=6444")
	require.Contains(t, api, "--advertise-address=198.18.11.1")
	require.Contains(t, api, "--service-cluster-ip-range=198.19.11.0/24")
	require.Contains(t, api, "--etcd-servers=https://127.0.0.1:12380")
	require.Contains(t, api, "--bind-address=198.18.11.1", "the bridge address, never 0.0.0.0")
	require.Contains(t, api, "--authorization-mode=Node,RBAC")
	require.Contains(t, api, "--anonymous-auth=false")
	require.Contains(t, api, "--enable-admission-plugins=NodeRestriction")
	kcm := strings.Join(controllerManagerArgs(p, "/k"), " ")
	require.Contains(t, kcm, "node-lifecycle-controller")
	require.Contains(t, kcm, "--use-service-account-credentials=true")
}
