// Package apitest starts a real etcd and kube-apiserver for tests that need
// the API's own behaviour (optimistic concurrency, validation, watches)
// rather than a fake clientset.
package apitest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nvcf/conformance/clusters/internal/binaries"
)

// Server is a running etcd and kube-apiserver on loopback.
type Server struct {
	// Client is an admin (system:masters) client of the apiserver.
	Client kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file for the same identity.
	Kubeconfig string
}

// Start starts etcd and kube-apiserver (no controllers, no scheduler) from
// the harness's binary cache on loopback; both stop when the test ends. It
// skips when the binaries have not been built (`make e2e` builds them) or
// under -short.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver; skipped with -short")
	}
	bin := binaries.Paths(binaries.Options{})
	etcdBin, apiBin := bin.Etcd, bin.APIServer
	for _, b := range []string{etcdBin, apiBin} {
		if _, err := os.Stat(b); err != nil {
			t.Skipf("control-plane binary %s not built yet (make e2e builds it): %v", b, err)
		}
	}
	dir := t.TempDir()
	etcdClient, etcdPeer, apiPort := freePort(t), freePort(t), freePort(t)

	etcd := start(t, dir, "etcd", etcdBin,
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:"+etcdClient, "--advertise-client-urls", "http://127.0.0.1:"+etcdClient,
		"--listen-peer-urls", "http://127.0.0.1:"+etcdPeer, "--initial-advertise-peer-urls", "http://127.0.0.1:"+etcdPeer,
		"--initial-cluster", "default=http://127.0.0.1:"+etcdPeer, "--log-level", "warn")

	caPEM, certPEM, keyPEM := servingCert(t)
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	write(t, dir, "serving.crt", certPEM)
	write(t, dir, "serving.key", keyPEM)
	write(t, dir, "sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}))
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	require.NoError(t, err)
	write(t, dir, "sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	token := "apitest-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	write(t, dir, "tokens.csv", []byte(token+",admin,admin,system:masters\n"))

	api := start(t, dir, "kube-apiserver", apiBin,
		"--etcd-servers", "http://127.0.0.1:"+etcdClient,
		"--bind-address", "127.0.0.1", "--secure-port", apiPort, "--advertise-address", "127.0.0.1",
		"--endpoint-reconciler-type", "none", "--service-cluster-ip-range", "10.96.0.0/24",
		"--tls-cert-file", filepath.Join(dir, "serving.crt"), "--tls-private-key-file", filepath.Join(dir, "serving.key"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"), "--authorization-mode", "AlwaysAllow",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--enable-priority-and-fairness=false")
	// Stop the apiserver before etcd (cleanups run last-in, first-out).
	t.Cleanup(func() { stop(api) })
	_ = etcd

	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host:            "https://127.0.0.1:" + apiPort,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
		QPS:             100, Burst: 200,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
	require.NoError(t, err, "kube-apiserver did not become ready; log in %s", filepath.Join(dir, "kube-apiserver.log"))
	kubeconfig := filepath.Join(dir, "kubeconfig")
	write(t, dir, "kubeconfig", []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: apitest
  cluster:
    server: https://127.0.0.1:%s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: apitest
  context: {cluster: apitest, user: admin}
current-context: apitest
`, apiPort, base64.StdEncoding.EncodeToString(caPEM), token)))
	return &Server{Client: cs, Kubeconfig: kubeconfig}
}

func start(t testing.TB, dir, name, bin string, args ...string) *exec.Cmd {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start(), "start %s", name)
	t.Cleanup(func() {
		stop(cmd)
		logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil && len(b) > 0 {
				tail := b[max(0, len(b)-4000):]
				t.Logf("%s log tail:\n%s", name, tail)
			}
		}
	})
	return cmd
}

// stop ends a process this test started (by its pid), first politely.
func stop(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func write(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
}

// servingCert mints a throwaway CA and a serving certificate for 127.0.0.1.
func servingCert(t testing.TB) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "apitest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost"}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
