package existing

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nvcf/conformance/clusters"
)

// apiServer answers the few calls the provider makes: nodes, namespaces
// (the harness's label selector) and namespace deletes, recorded.
type apiServer struct {
	mu         sync.Mutex
	namespaces map[string]bool // name → carries the harness label
	deleted    []string
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api/v1/nodes":
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "NodeList", "apiVersion": "v1", "items": []any{map[string]any{"metadata": map[string]any{"name": "n1"}}}})
	case r.URL.Path == "/api/v1/namespaces" && r.Method == http.MethodGet:
		var items []any
		for n, ours := range a.namespaces {
			if ours || r.URL.Query().Get("labelSelector") == "" {
				items = append(items, map[string]any{"metadata": map[string]any{"name": n}})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "NamespaceList", "apiVersion": "v1", "items": items})
	case r.Method == http.MethodDelete:
		name := filepath.Base(r.URL.Path)
		a.deleted = append(a.deleted, name)
		delete(a.namespaces, name)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"})
	case r.Method == http.MethodGet:
		if _, ok := a.namespaces[filepath.Base(r.URL.Path)]; !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Namespace", "apiVersion": "v1", "metadata": map[string]any{"name": filepath.Base(r.URL.Path)}})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func userKubeconfig(t *testing.T, server string, contexts ...string) string {
	cfg := clientcmdapi.NewConfig()
	for _, c := range contexts {
		cfg.Clusters["cl-"+c] = &clientcmdapi.Cluster{Server: server}
		cfg.AuthInfos["u-"+c] = &clientcmdapi.AuthInfo{Token: "t-" + c}
		cfg.Contexts[c] = &clientcmdapi.Context{Cluster: "cl-" + c, AuthInfo: "u-" + c, Namespace: "users-ns"}
	}
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

func TestUpNamesContextsAfterClustersAndDownDeletesOnlyOurs(t *testing.T) {
	api := &apiServer{namespaces: map[string]bool{"kube-system": false, "team-x": false, "left-by-someone": true}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kc := userKubeconfig(t, srv.URL, "prod-eu", "b")
	p := New(Options{Kubeconfig: kc, Contexts: map[string]string{"a": "prod-eu"}, StateRoot: t.TempDir()})
	spec := clusters.Spec{Name: "env", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 1}, {Name: "b", Nodes: 1}}}
	ctx := context.Background()
	env, err := p.Up(ctx, spec)
	require.NoError(t, err)
	require.Equal(t, []string{"n1"}, env.Clusters[0].Nodes)
	require.Equal(t, "a", env.Clusters[0].Context, "contexts are named after the topology's clusters")
	got, err := clientcmd.LoadFromFile(env.Kubeconfig)
	require.NoError(t, err)
	require.Equal(t, "t-prod-eu", got.AuthInfos[got.Contexts["a"].AuthInfo].Token)
	require.Equal(t, "t-b", got.AuthInfos[got.Contexts["b"].AuthInfo].Token)
	fi, err := os.Stat(env.Kubeconfig)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "it holds credentials")
	_, err = p.Status(ctx, "env")
	require.NoError(t, err)

	// The deployer made "nvcf" (labelled); Down deletes it, and not the
	// labelled namespace that was there before Up, nor anyone else's.
	api.mu.Lock()
	api.namespaces["nvcf"] = true
	api.mu.Unlock()
	require.NoError(t, p.Down(ctx, "env"))
	require.Equal(t, []string{"nvcf"}, api.deleted, "one namespace, once: both contexts reach the same test server and the second finds it gone")
	require.Contains(t, api.namespaces, "left-by-someone")
	_, err = p.Status(ctx, "env")
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.NoError(t, p.Down(ctx, "env"), "down of nothing is fine")
}

func TestUpNamesAMissingContextAndTheFlag(t *testing.T) {
	kc := userKubeconfig(t, "https://127.0.0.1:1", "other")
	p := New(Options{Kubeconfig: kc, StateRoot: t.TempDir()})
	_, err := p.Up(context.Background(), clusters.Spec{Name: "env", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "region-a", Nodes: 1}}})
	require.ErrorContains(t, err, `has no context "region-a"`)
	require.ErrorContains(t, err, "--context region-a=CONTEXT")
}
