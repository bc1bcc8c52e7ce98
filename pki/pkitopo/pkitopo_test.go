package pkitopo_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/pki/pkitopo"
)

func TestRequestFromDefaultTopology(t *testing.T) {
	topo, err := topology.Load(filepath.Join("..", "..", "topologies", "default.yaml"))
	require.NoError(t, err)
	req := pkitopo.Request(topo, 48*time.Hour, true)
	require.NoError(t, req.Validate())
	require.Equal(t, 48*time.Hour, req.Validity)
	require.True(t, req.Intermediate)
	require.Equal(t, []pki.ClusterNames{
		{
			Name:        "region-a",
			DialHosts:   []string{"stargate.region-a.nvcf.test", "invoke.region-a.nvcf.test"},
			Authorities: []string{"*.sg.region-a.nvcf.test"},
			QUICNames:   []string{"*.sg.region-a.nvcf.test", "quic.region-a.nvcf.test"},
		},
		{
			Name:        "region-b",
			DialHosts:   []string{"stargate.region-b.nvcf.test", "invoke.region-b.nvcf.test"},
			Authorities: []string{"*.sg.region-b.nvcf.test"},
			QUICNames:   []string{"*.sg.region-b.nvcf.test", "quic.region-b.nvcf.test"},
		},
	}, req.Clusters, "only stargate clusters get server certificates")
	require.Equal(t, []pki.ClientIdentity{{Cluster: "workers", Name: "pylon.workers.nvcf.test"}}, req.Clients)
	// The names agree with the topology's own derivations.
	require.Equal(t, topo.GRPCHost("region-a"), req.Clusters[0].DialHosts[0])
	require.Equal(t, topo.IdentityWildcard("region-b"), req.Clusters[1].QUICNames[0])
}
