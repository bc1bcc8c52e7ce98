package run

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/reports"
)

func TestReproAndDownHintNameTheProvider(t *testing.T) {
	o := Options{TopologyRef: "topologies/default.yaml", BinDir: "/b", Artifacts: "/a", TimeScale: 1}
	r := reports.CaseResult{ID: "tls/wrong-root", Cell: "workload=statefulset,trust=bundle"}
	require.Equal(t, "/b/harness run --topology topologies/default.yaml --run '^tls/wrong-root$' --workload statefulset --trust bundle --discovery endpointslice --profile secure --artifacts '/a-repro' --keep", o.Repro(r))
	require.Equal(t, "harness down --topology topologies/default.yaml", o.downHint())

	o.ProviderArgs = []string{"--provider", "existing", "--kubeconfig", "/my kube/config"}
	require.Contains(t, o.Repro(r), "--topology topologies/default.yaml '--provider' 'existing' '--kubeconfig' '/my kube/config' --run")
	require.Equal(t, "harness down --topology topologies/default.yaml --provider existing", o.downHint())
}

// A run of real NVCF binaries repeats as one: the flavor, the binaries
// and which roles are real travel with the case.
func TestReproKeepsTheRealComponents(t *testing.T) {
	o := Options{TopologyRef: "topologies/default.yaml", BinDir: "/b", Artifacts: "/a", TimeScale: 1,
		ProviderArgs: []string{"--image-binary", "stargate=/nv/stargate"}, Flavor: "nvcf", NVCFBinDir: "/nv", Real: []string{"stargate"}}
	o.Images.Stargate = "nvcf/stargate"
	r := reports.CaseResult{ID: "tls/wrong-root", Cell: "workload=statefulset,trust=bundle"}
	require.Equal(t, "/b/harness run --topology topologies/default.yaml '--image-binary' 'stargate=/nv/stargate' --run '^tls/wrong-root$' --workload statefulset --trust bundle --discovery endpointslice --profile secure"+
		" --images 'stargate=nvcf/stargate' --flavor nvcf --nvcf-bin-dir '/nv' --real stargate --artifacts '/a-repro' --keep", o.Repro(r))
}
