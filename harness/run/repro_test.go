package run

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/reports"
)

func TestReproAndDownHintNameTheProvider(t *testing.T) {
	o := Options{TopologyRef: "topologies/default.yaml", BinDir: "/b", Artifacts: "/a", TimeScale: 1}
	r := reports.CaseResult{ID: "tls/wrong-root", Cell: "workload=statefulset,trust=bundle"}
	require.Equal(t, "/b/harness run --topology topologies/default.yaml --run '^tls/wrong-root$' --workload statefulset --trust bundle --artifacts '/a-repro' --keep", o.repro(r))
	require.Equal(t, "harness down --topology topologies/default.yaml", o.downHint())

	o.ProviderArgs = []string{"--provider", "existing", "--kubeconfig", "/my kube/config"}
	require.Contains(t, o.repro(r), "--topology topologies/default.yaml '--provider' 'existing' '--kubeconfig' '/my kube/config' --run")
	require.Equal(t, "harness down --topology topologies/default.yaml --provider existing", o.downHint())
}
