package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nvcf/conformance/clusters/existing"
	"github.com/nvcf/conformance/clusters/local"
	"github.com/nvcf/conformance/reports"
	"github.com/nvcf/conformance/topologies"
)

// TestExistingProviderOnForeignClusters runs `harness run --provider
// existing` on clusters it did not create: embedded clusters brought up
// by `harness up`, reached through a kubeconfig whose contexts are named
// otherwise (mapped with --context). It proves the cases pass there, that
// those needing a network seam are skipped with the reason, that the run
// changes nothing outside its namespaces, and that after `down --provider
// existing` every object of every cluster is as it was before. `make
// e2e-existing` runs it; NVCF_EXISTING_RUN holds the run's selection flags
// (default: one cell's every layer).
func TestExistingProviderOnForeignClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("e2e: the foreign clusters are the embedded provider's, which needs root; run `make e2e-existing` as root")
	}
	hostlock.Shared(t)
	if !local.BinariesReady() {
		t.Skip("e2e: the control-plane binaries are not cached; run `make binaries` first")
	}
	bin := os.Getenv("NVCF_BIN")
	if bin == "" {
		t.Skip("e2e: NVCF_BIN names no bin/ folder (make build); `make e2e-existing` sets it")
	}
	harness := filepath.Join(bin, "harness")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// Its own state folder: the user's environments stay out of it.
	state := t.TempDir()
	artifacts := filepath.Join(state, "artifacts")
	topo := "../../topologies/default.yaml"
	tp, err := topologies.Load(topo)
	require.NoError(t, err)
	try := func(args ...string) (string, error) {
		t.Helper()
		c := exec.CommandContext(ctx, harness, args...)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		start := time.Now()
		err := c.Run()
		t.Logf("harness %s: %s (%v)\n%s", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond), err, tail(out.String(), 40))
		return out.String(), err
	}
	cmd := func(args ...string) string {
		t.Helper()
		out, err := try(args...)
		require.NoError(t, err, "harness %v", args)
		return out
	}
	t.Cleanup(func() {
		c := exec.Command(harness, "down", "--topology", topo)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		out, err := c.CombinedOutput()
		require.NoError(t, err, "harness down (embedded): %s", out)
	})

	// The foreign clusters, and a kubeconfig that names them otherwise.
	cmd("up", "--topology", topo)
	status := cmd("status", "--topology", topo)
	m := regexp.MustCompile(`(?m)^external DNS (\S+)$`).FindStringSubmatch(status)
	require.NotNil(t, m, "the embedded environment's DNS in `harness status`")
	dns := m[1]
	embedded := filepath.Join(state, "nvcf-harness", tp.Name, "kubeconfig")
	foreign := filepath.Join(state, "foreign.kubeconfig")
	var contexts []string
	renameContexts(t, embedded, foreign, "foreign-")
	for _, c := range tp.Clusters {
		contexts = append(contexts, c.Name+"=foreign-"+c.Name)
	}

	before := snapshotAll(ctx, t, foreign)
	// --keep: `down --provider existing` is what removes the harness's
	// objects here, after the run's are checked to be in its namespaces.
	runArgs := []string{"run", "--topology", topo, "--provider", "existing", "--kubeconfig", foreign,
		"--context", strings.Join(contexts, ","), "--dns", dns, "--artifacts", artifacts, "--keep"}
	sel := os.Getenv("NVCF_EXISTING_RUN")
	if sel == "" {
		sel = "--workload statefulset --trust bundle"
	}
	runArgs = append(runArgs, strings.Fields(sel)...)
	// A failed case fails the run; the cases say which below, after down
	// and the diff, which must hold either way.
	_, runErr := try(runArgs...)
	during := snapshotAll(ctx, t, foreign)
	ours := harnessNamespaces(during)
	var outside []string
	for _, d := range diffSnapshots(before, during) {
		if !inNamespaces(d, ours, during) {
			outside = append(outside, d)
		}
	}
	t.Logf("after the run: %d objects; the harness's namespaces %v", len(during), ours)
	require.NotEmpty(t, ours, "the run made no namespace of its own")
	require.Empty(t, outside, "the run changed the clusters outside its namespaces")
	cmd("down", "--topology", topo, "--provider", "existing")
	after := snapshotAll(ctx, t, foreign)

	results, err := reports.LoadCases(artifacts)
	require.NoError(t, err)
	var counts reports.Counts
	for _, r := range results {
		switch r.Outcome {
		case reports.Pass:
			counts.Pass++
		case reports.Skip:
			counts.Skip++
			require.Contains(t, r.Message, "no network seam on this provider", "%s is skipped for another reason", r.Name)
		default:
			t.Errorf("%s: %s: %s", r.Name, r.Outcome, r.Message)
		}
	}
	t.Logf("cases: %d passed, %d skipped (no network seam) of %d", counts.Pass, counts.Skip, len(results))
	require.NotZero(t, counts.Pass)

	diff := diffSnapshots(before, after)
	t.Logf("objects before %d, after %d; differences: %d", len(before), len(after), len(diff))
	require.Empty(t, diff, "the clusters are not as the harness found them")
	require.NoError(t, runErr, "harness run")
}

// renameContexts copies kubeconfig in to out with every context, cluster
// and user prefixed: the harness must follow --context, not the names.
func renameContexts(t *testing.T, in, out, prefix string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(in)
	require.NoError(t, err)
	n := clientcmdapi.NewConfig()
	for name, c := range cfg.Contexts {
		nc := c.DeepCopy()
		nc.Cluster, nc.AuthInfo = prefix+c.Cluster, prefix+c.AuthInfo
		n.Contexts[prefix+name] = nc
		n.Clusters[prefix+c.Cluster] = cfg.Clusters[c.Cluster].DeepCopy()
		n.AuthInfos[prefix+c.AuthInfo] = cfg.AuthInfos[c.AuthInfo].DeepCopy()
	}
	n.CurrentContext = prefix + cfg.CurrentContext
	require.NoError(t, clientcmd.WriteToFile(*n, out))
}

// churn are resources whose objects the clusters change on their own
// (leader leases, events, endpoint bookkeeping): not the harness's doing.
var churn = []string{"events", "leases", "endpoints", "endpointslices", "componentstatuses"}

// snapshotAll lists every object of every listable resource in every
// context of kubeconfig: "context group/version/resource ns/name" → the
// object without the fields the API server changes by itself.
func snapshotAll(ctx context.Context, t *testing.T, kubeconfig string) map[string]string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	require.NoError(t, err)
	out := map[string]string{}
	for name := range cfg.Contexts {
		rc, err := clientcmd.NewNonInteractiveClientConfig(*cfg, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		require.NoError(t, err)
		dc, err := discovery.NewDiscoveryClientForConfig(rc)
		require.NoError(t, err)
		dyn, err := dynamic.NewForConfig(rc)
		require.NoError(t, err)
		lists, err := dc.ServerPreferredResources()
		require.NoError(t, err, "context %s: discovery", name)
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			require.NoError(t, err)
			for _, r := range l.APIResources {
				if !slices.Contains(r.Verbs, "list") || slices.Contains(churn, r.Name) {
					continue
				}
				gvr := gv.WithResource(r.Name)
				ul, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
				require.NoError(t, err, "context %s: list %s", name, gvr)
				for _, o := range ul.Items {
					out[fmt.Sprintf("%s %s/%s %s/%s", name, l.GroupVersion, r.Name, o.GetNamespace(), o.GetName())] = normalize(t, o)
				}
			}
		}
	}
	return out
}

func normalize(t *testing.T, o unstructured.Unstructured) string {
	t.Helper()
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	o.SetGeneration(0)
	if o.GetKind() == "Node" {
		// The kubelet's copy of the node's status, rewritten at each
		// heartbeat.
		unstructured.RemoveNestedField(o.Object, "metadata", "annotations", "virtual-kubelet.io/last-applied-node-status")
	}
	unstructured.RemoveNestedField(o.Object, "status")
	b, err := json.Marshal(o.Object)
	require.NoError(t, err)
	return string(b)
}

// harnessNamespaces are the "context namespace" pairs of a snapshot's
// namespaces that carry the harness's label.
func harnessNamespaces(snap map[string]string) []string {
	var out []string
	for k, v := range snap {
		f := strings.Fields(k)
		if len(f) == 3 && f[1] == "v1/namespaces" && strings.Contains(v, `"app.kubernetes.io/managed-by":"`+existing.ManagedBy+`"`) {
			out = append(out, f[0]+" "+strings.TrimPrefix(f[2], "/"))
		}
	}
	sort.Strings(out)
	return out
}

// inNamespaces says whether a diff line is about an object in one of the
// namespaces, the namespace itself, or the cluster IP the API server
// allocated (an IPAddress object) for a Service in one.
func inNamespaces(line string, namespaces []string, snap map[string]string) bool {
	f := strings.Fields(line) // verb context resource ns/name
	if len(f) < 4 {
		return false
	}
	ref := strings.TrimSuffix(f[3], ":")
	ns, name, _ := strings.Cut(ref, "/")
	switch f[2] {
	case "v1/namespaces":
		ns = name
	case "networking.k8s.io/v1/ipaddresses":
		var ip struct {
			Spec struct {
				ParentRef struct{ Resource, Namespace string } `json:"parentRef"`
			} `json:"spec"`
		}
		if json.Unmarshal([]byte(snap[f[1]+" "+f[2]+" "+ref]), &ip) != nil || ip.Spec.ParentRef.Resource != "services" {
			return false
		}
		ns = ip.Spec.ParentRef.Namespace
	}
	return slices.Contains(namespaces, f[1]+" "+ns)
}

// diffSnapshots lists the objects added, removed or changed.
func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		switch w, ok := after[k]; {
		case !ok:
			d = append(d, "removed "+k)
		case w != v:
			d = append(d, fmt.Sprintf("changed %s:\n  before %s\n  after  %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	sort.Strings(d)
	return d
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
