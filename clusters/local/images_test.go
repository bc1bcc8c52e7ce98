package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
)

// An environment kept up from another checkout runs that checkout's
// component binaries; reusing it would test the wrong code.
func TestReuseNeedsTheSameComponentBinaries(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "default")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	spec := clusters.Spec{Name: "default", Domain: "nvcf.test", Clusters: []clusters.ClusterSpec{{Name: "a", Nodes: 1}}}
	require.NoError(t, agent.WriteConfig(dir, agent.Config{Spec: spec, Images: map[string]string{"nvcf-ref": "/one/bin/nvcf-ref"}}))

	same := &provider{o: Options{StateRoot: root, Images: map[string]string{"nvcf-ref": "/one/bin/nvcf-ref"}}}
	require.Empty(t, same.imagesDiff("default"))
	other := &provider{o: Options{StateRoot: root, Images: map[string]string{"nvcf-ref": "/two/bin/nvcf-ref", "stargate": "/x"}}}
	require.Equal(t, "nvcf-ref: /one/bin/nvcf-ref, not /two/bin/nvcf-ref; stargate: none, not /x", other.imagesDiff("default"))
}
