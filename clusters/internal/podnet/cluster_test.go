package podnet

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A cluster name becomes part of netns names, so it must be a DNS label
// (topology.IsDNSLabel); the check comes before anything touches the host.
func TestSetupClusterRefusesANameThatIsNoDNSLabel(t *testing.T) {
	for _, name := range []string{"Region-A", "region_a", "-a", strings.Repeat("a", 64)} {
		_, err := SetupCluster(context.Background(), ClusterConfig{Index: 0, Name: name, StateDir: t.TempDir()})
		require.ErrorContains(t, err, "not a DNS label", name)
	}
}
