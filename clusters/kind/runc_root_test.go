package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"github.com/nvcf/conformance/clusters/hostlock"
	"github.com/nvcf/conformance/clusters/kind/internal/nodeimage"
)

// The node image boots without Docker: two nodes run under plain runc in
// network namespaces of their own, joined by a veth pair; kubeadm makes a
// cluster of them with the node image's images; the provider's pod network
// (setupPodNetwork) and readiness (waitReady) then give two Ready nodes and
// CoreDNS, and pods on the two nodes reach each other by address and
// through a Service name. What kind's create adds on top (the containers,
// the kubeadm configuration) is TestKindClustersUpAndDown's.
func TestNodeImageBootsUnderRunc(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: runc containers and network namespaces need root")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		t.Skip("skipping: runc is not installed")
	}
	hostlock.Shared(t)
	bin := t.TempDir()
	gobuild(t, bin, nil, "github.com/nvcf/conformance/cmd/nvcf-pause", "github.com/nvcf/conformance/cmd/nvcf-runc")
	img, err := FindNodeImage(ImageOptions{BinDir: bin})
	if err != nil {
		t.Skipf("skipping: %v (make kind-node-image builds it, once)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	work := t.TempDir()
	base := filepath.Join(work, "base")
	extractImage(t, img.Archive, base)

	tag := fmt.Sprintf("kr%d", os.Getpid()%100000)
	cp := &runcNode{id: tag + "-cp", addr: "198.18.232.2", role: "control-plane"}
	w1 := &runcNode{id: tag + "-w1", addr: "198.18.232.3", role: "worker"}
	all := []*runcNode{cp, w1}
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	for _, n := range all {
		ip("netns", "add", n.id)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.id).Run() })
	}
	ip("link", "add", tag+"a", "netns", cp.id, "type", "veth", "peer", "name", tag+"b", "netns", w1.id)
	for i, n := range all {
		dev := tag + string(rune('a'+i))
		ip("-n", n.id, "link", "set", dev, "name", "eth0")
		ip("-n", n.id, "addr", "add", n.addr+"/24", "dev", "eth0")
		ip("-n", n.id, "link", "set", "eth0", "up")
		ip("-n", n.id, "link", "set", "lo", "up")
	}
	ip("-n", cp.id, "route", "add", "default", "via", w1.addr)
	ip("-n", w1.id, "route", "add", "default", "via", cp.addr)

	apiDir := filepath.Join(work, "api")
	require.NoError(t, os.MkdirAll(apiDir, 0o700))
	for _, n := range all {
		n.bundle = filepath.Join(work, n.id)
		rootfs := filepath.Join(n.bundle, "rootfs")
		out, err := exec.Command("cp", "-a", base, rootfs).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NoError(t, os.MkdirAll(filepath.Join(n.bundle, "var"), 0o755))
		out, err = exec.Command("cp", "-a", rootfs+"/var/.", filepath.Join(n.bundle, "var")).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NoError(t, os.WriteFile(filepath.Join(rootfs, "etc/hostname"), []byte(n.id+"\n"), 0o644))
		hosts := fmt.Sprintf("127.0.0.1 localhost\n%s %s\n%s %s\n", cp.addr, cp.id, w1.addr, w1.id)
		require.NoError(t, os.WriteFile(filepath.Join(rootfs, "etc/hosts"), []byte(hosts), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(n.bundle, "config.json"), runcSpec(n, apiDir), 0o644))
		log, err := os.Create(filepath.Join(work, n.id+".log"))
		require.NoError(t, err)
		run := exec.Command("runc", "run", "-d", "--bundle", n.bundle, n.id)
		run.Stdout, run.Stderr = log, log
		require.NoError(t, run.Run(), "runc run %s", n.id)
		log.Close()
		t.Cleanup(func() {
			_ = exec.Command("runc", "kill", n.id, "KILL").Run()
			time.Sleep(2 * time.Second)
			_ = exec.Command("runc", "delete", "-f", n.id).Run()
		})
	}
	for _, n := range all {
		require.Eventually(t, func() bool {
			var out bytes.Buffer
			_ = n.Command("systemctl", "is-system-running").SetStdout(&out).Run()
			return strings.TrimSpace(out.String()) == "running"
		}, 2*time.Minute, time.Second, "systemd running in %s", n.id)
	}

	v := nodeimage.Pinned()
	pl := planOf(0)
	initConf := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
controlPlaneEndpoint: "%s:6443"
imageRepository: %s
etcd: {local: {imageTag: %s}}
dns: {imageTag: %s}
networking: {podSubnet: "%s", serviceSubnet: "%s"}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens: [{token: "abcdef.0123456789abcdef"}]
localAPIEndpoint: {advertiseAddress: "%s", bindPort: 6443}
nodeRegistration:
  criSocket: "unix:///run/containerd/containerd.sock"
  kubeletExtraArgs: [{name: node-ip, value: "%s"}]
skipPhases: [preflight]
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
cgroupRoot: /kubelet
failSwapOn: false
failCgroupV1: false
imageGCHighThresholdPercent: 100
evictionHard: {nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
conntrack: {maxPerCore: 0}
`, v.Kubernetes, cp.id, nodeimage.Repository, v.Etcd, v.CoreDNS, pl.Pods, pl.Services, cp.addr, cp.addr)
	joinConf := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
nodeRegistration:
  criSocket: "unix:///run/containerd/containerd.sock"
  kubeletExtraArgs: [{name: node-ip, value: "%s"}]
discovery:
  bootstrapToken: {apiServerEndpoint: "%s:6443", token: "abcdef.0123456789abcdef", unsafeSkipCAVerification: true}
skipPhases: [preflight]
`, w1.addr, cp.id)
	for n, conf := range map[*runcNode]string{cp: initConf, w1: joinConf} {
		require.NoError(t, n.Command("cp", "/dev/stdin", "/kind/kubeadm.conf").SetStdin(strings.NewReader(conf)).Run())
	}
	start := time.Now()
	var out bytes.Buffer
	require.NoError(t, cp.CommandContext(ctx, "kubeadm", "init", "--skip-token-print", "--config=/kind/kubeadm.conf").SetStdout(&out).SetStderr(&out).Run(), "kubeadm init: %s", out.String())
	out.Reset()
	require.NoError(t, w1.CommandContext(ctx, "kubeadm", "join", "--config=/kind/kubeadm.conf").SetStdout(&out).SetStderr(&out).Run(), "kubeadm join: %s", out.String())
	t.Logf("kubeadm init and join under runc: %s", time.Since(start).Round(time.Second))

	// The API server, for this process: a socat in the control-plane node
	// on a unix socket in a folder shared with the host (the host has no
	// route into the nodes' namespaces).
	socat := exec.Command("runc", "exec", "-d", cp.id, "socat", "UNIX-LISTEN:/nvcf-api/api.sock,fork", "TCP:127.0.0.1:6443")
	b, err := socat.CombinedOutput()
	require.NoError(t, err, "%s", b)
	var admin bytes.Buffer
	require.NoError(t, cp.Command("cat", "/etc/kubernetes/admin.conf").SetStdout(&admin).Run())
	rc, err := clientcmd.RESTConfigFromKubeConfig(admin.Bytes())
	require.NoError(t, err)
	sock := filepath.Join(apiDir, "api.sock")
	rc.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}
	rc.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := cs.Discovery().ServerVersion(); return err == nil }, time.Minute, time.Second, "the API through the socket")

	nets, err := setupPodNetwork(ctx, cs, []nodes.Node{cp, w1})
	require.NoError(t, err)
	require.Len(t, nets, 2)
	names, err := waitReady(ctx, cs, 2)
	require.NoError(t, err)
	require.Equal(t, []string{cp.id, w1.id}, names)
	t.Logf("two nodes Ready and CoreDNS available %s after kubeadm init", time.Since(start).Round(time.Second))

	podnetBin := filepath.Join(bin, "podnet")
	gobuild(t, bin, []string{"CGO_ENABLED=0"}, "./testdata/podnet")
	archive := filepath.Join(work, "podnet.tar")
	const image = nodeimage.Repository + "/kindtest-podnet:1"
	require.NoError(t, nodeimage.WriteBinaryImage(archive, image, podnetBin))
	for _, n := range all {
		f, err := os.Open(archive)
		require.NoError(t, err)
		var out bytes.Buffer
		err = n.Command("ctr", "--namespace=k8s.io", "images", "import", "--all-platforms", "--local", "-").SetStdin(f).SetStderr(&out).Run()
		f.Close()
		require.NoError(t, err, "%s", out.String())
	}
	nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	pods := startPodnet(ctx, t, cs, nl.Items, image)
	a, b2 := pods[0], pods[1]
	require.NotEqual(t, a.Spec.NodeName, b2.Spec.NodeName)
	var who map[string]string
	get(ctx, t, cs, a, "/fetch", map[string]string{"url": "http://" + at8080(b2.Status.PodIP) + "/whoami"}, &who)
	require.Equal(t, b2.Name, who["pod"])
	require.Equal(t, a.Status.PodIP, who["caller"], "no masquerading between pods")
	var addrs []string
	get(ctx, t, cs, a, "/resolve", map[string]string{"name": "kubernetes.default.svc.cluster.local"}, &addrs)
	require.Equal(t, []string{addrAt(pl.Services, 1).String()}, addrs)
	get(ctx, t, cs, a, "/fetch", map[string]string{"url": "http://podnet-" + b2.Spec.NodeName + ".podnet.svc.cluster.local:8080/whoami"}, &who)
	require.Equal(t, b2.Name, who["pod"])
	for _, p := range pods {
		require.True(t, pl.Pods.Contains(netip.MustParseAddr(p.Status.PodIP)))
	}
}

// runcNode is a node container run by runc, as kind's nodes.Node.
type runcNode struct {
	id, addr, role, bundle string
}

var _ nodes.Node = (*runcNode)(nil)

func (n *runcNode) String() string               { return n.id }
func (n *runcNode) Role() (string, error)        { return n.role, nil }
func (n *runcNode) IP() (string, string, error)  { return n.addr, "", nil }
func (n *runcNode) SerialLogs(w io.Writer) error { return nil }
func (n *runcNode) Command(c string, a ...string) kindexec.Cmd {
	return kindexec.Command("runc", append([]string{"exec", n.id, c}, a...)...)
}
func (n *runcNode) CommandContext(ctx context.Context, c string, a ...string) kindexec.Cmd {
	return kindexec.CommandContext(ctx, "runc", append([]string{"exec", n.id, c}, a...)...)
}

// runcSpec is a privileged-like OCI spec, as Docker's --privileged gives a
// kind node (without CAP_SYS_RESOURCE, which this machine's bounding set
// may lack: the node's entrypoint then takes the shim's path), with /var a
// folder of its own and the API folder shared with the host.
func runcSpec(n *runcNode, apiDir string) []byte {
	var caps []string
	for _, c := range []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
		"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
		"SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_TIME",
		"SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
		"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE"} {
		caps = append(caps, "CAP_"+c)
	}
	mount := func(dst, typ, src string, opts ...string) map[string]any {
		return map[string]any{"destination": dst, "type": typ, "source": src, "options": opts}
	}
	spec := map[string]any{
		"ociVersion": "1.0.2",
		"process": map[string]any{
			"terminal": false, "user": map[string]int{"uid": 0, "gid": 0}, "cwd": "/",
			"args":         []string{"/usr/local/bin/entrypoint", "/sbin/init"},
			"env":          []string{"container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"capabilities": map[string][]string{"bounding": caps, "effective": caps, "permitted": caps, "inheritable": caps, "ambient": caps},
		},
		"root":     map[string]any{"path": "rootfs"},
		"hostname": n.id,
		"mounts": []any{
			mount("/proc", "proc", "proc"),
			mount("/dev", "tmpfs", "tmpfs", "nosuid", "strictatime", "mode=755", "size=65536k"),
			mount("/dev/pts", "devpts", "devpts", "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"),
			mount("/dev/shm", "tmpfs", "shm", "nosuid", "noexec", "nodev", "mode=1777", "size=65536k"),
			mount("/dev/mqueue", "mqueue", "mqueue", "nosuid", "noexec", "nodev"),
			mount("/sys", "sysfs", "sysfs", "nosuid", "noexec", "nodev"),
			mount("/sys/fs/cgroup", "cgroup", "cgroup", "nosuid", "noexec", "nodev", "relatime"),
			mount("/run", "tmpfs", "tmpfs", "nosuid", "nodev", "mode=755"),
			mount("/tmp", "tmpfs", "tmpfs", "nosuid", "nodev"),
			mount("/var", "bind", filepath.Join(n.bundle, "var"), "rbind", "rw"),
			mount("/nvcf-api", "bind", apiDir, "rbind", "rw"),
		},
		"linux": map[string]any{
			"namespaces": []map[string]string{{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"},
				{"type": "network", "path": "/var/run/netns/" + n.id}},
			"resources":   map[string]any{"devices": []map[string]any{{"allow": true, "access": "rwm"}}, "cpu": map[string]int{"shares": 2}},
			"devices":     []map[string]any{{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11, "fileMode": 0o644}},
			"cgroupsPath": "/" + n.id,
		},
	}
	b, _ := json.MarshalIndent(spec, "", " ")
	return b
}

// extractImage unpacks the node image's flattened file system into dir.
func extractImage(t *testing.T, archive, dir string) {
	t.Helper()
	img, err := tarball.ImageFromPath(archive, nil)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	rc := mutate.Extract(img)
	defer rc.Close()
	cmd := exec.Command("tar", "--numeric-owner", "-x", "-C", dir)
	cmd.Stdin = rc
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
