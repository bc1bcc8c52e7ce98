package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults"
)

func TestFaultCommandWithoutClusters(t *testing.T) {
	state := t.TempDir()
	var out, errb bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"fault", "list", "--state", state}, &out, &errb))
	require.Contains(t, out.String(), "no active faults")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"fault", "kinds"}, &out, &errb))
	require.Contains(t, out.String(), "partition  FROM->TO")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"fault", "cleanup", "--state", state}, &out, &errb))
	require.Contains(t, out.String(), "nothing to clean up")

	// Injecting needs the running environment's address plan; the
	// parameters' checks are faults' tests.
	err := run(context.Background(), []string{"fault", "inject", "--state", state, "--topology", "../../topologies/default.yaml",
		"--kind", "partition", "--target", "workers->region-b"}, &out, &errb)
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorContains(t, run(context.Background(), []string{"fault", "explode"}, &out, &errb), "unknown subcommand")
}

// On an environment of existing clusters, `fault inject` does not assume
// the embedded provider: without --provider it says to pass it; with it, a
// fault that needs a network seam is refused with the reason, before
// anything is injected.
func TestFaultInjectOnExistingClusters(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/nodes":
			fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"n1"}}]}`)
		case "/api/v1/namespaces":
			fmt.Fprint(w, `{"kind":"NamespaceList","apiVersion":"v1","items":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	cfg := clientcmdapi.NewConfig()
	for _, c := range []string{"region-a", "region-b", "workers"} {
		cfg.Clusters[c] = &clientcmdapi.Cluster{Server: api.URL}
		cfg.AuthInfos[c] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts[c] = &clientcmdapi.Context{Cluster: c, AuthInfo: c}
	}
	kc := filepath.Join(t.TempDir(), "config")
	require.NoError(t, clientcmd.WriteToFile(*cfg, kc))
	ctx := context.Background()
	topo := "../../topologies/default.yaml"
	var out, errb bytes.Buffer
	require.NoError(t, run(ctx, []string{"up", "--provider", "existing", "--kubeconfig", kc, "--topology", topo}, &out, &errb), errb.String())

	inject := []string{"fault", "inject", "--topology", topo, "--kind", "partition", "--target", "workers->region-b", "--duration", "1s"}
	err := run(ctx, inject, &out, &errb)
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorContains(t, err, "pass --provider existing")

	err = run(ctx, append(inject, "--provider", "existing"), &out, &errb)
	require.ErrorIs(t, err, faults.ErrNoSeam)
	require.ErrorContains(t, err, "refused on the existing provider")
	require.ErrorContains(t, err, "partition drops traffic")

	err = run(ctx, []string{"fault", "inject", "--provider", "existing", "--topology", topo, "--kind", "pod-crash", "--target", "region-a/nvcf/stargate-0"}, &out, &errb)
	require.ErrorIs(t, err, faults.ErrNoSeam)
	require.ErrorContains(t, err, "pods' processes on this host")

	require.NoError(t, run(ctx, []string{"fault", "list", "--provider", "existing", "--topology", topo}, &out, &errb))
	require.Contains(t, out.String(), "no active faults", "nothing was journalled")
	require.NoError(t, run(ctx, []string{"down", "--provider", "existing", "--topology", topo}, &out, &errb))
}
