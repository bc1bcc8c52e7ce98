package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestManifestsCommand(t *testing.T) {
	var out, errb bytes.Buffer
	err := runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml",
		"--cell", "workload=mixed,trust=system", "--cluster", "region-b", "--images", "router=reg.example/router:1"}, &out, &errb)
	require.NoError(t, err, errb.String())
	s := out.String()
	require.Contains(t, s, "cluster region-b (stargate), cell workload=mixed,trust=system")
	require.Contains(t, s, "kind: Deployment\nmetadata:\n  name: stargate")
	require.Contains(t, s, `image: "reg.example/router:1"`)
	require.NotContains(t, s, "region-a (stargate)")
	// The one plaintext URL: Stargate's in-cluster hop to the worker-auth gateway.
	require.False(t, strings.Contains(strings.ReplaceAll(s, "--worker-auth-endpoint=http://worker-auth-gateway.", ""), "http://"))

	// A cell the snapshot's build cannot run is refused, naming the flag.
	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--flavor", "nvcf", "--nvcf-bin-dir", "",
		"--cell", "workload=statefulset,trust=grpc-override"}, &out, &errb)
	require.ErrorContains(t, err, "unsupported by this build")
	require.ErrorContains(t, err, "--grpc-tls-ca-cert-path")

	// The discovery axis and the system-plus-bundle trust, in any key order.
	out.Reset()
	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml",
		"--cell", "discovery=dns,trust=system-plus-bundle,workload=deployment"}, &out, &errb)
	require.NoError(t, err, errb.String())
	s = out.String()
	require.Contains(t, s, "cell workload=deployment,trust=system-plus-bundle,discovery=dns")
	require.Contains(t, s, "--discovery=dns")
	require.NotContains(t, s, "--discovery=endpointslice")
	require.Contains(t, s, "nvcf-transport-trust-bundle-unrelated")
	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--cell", "workload=mixed,trust=system,discovery=mdns"}, &out, &errb)
	require.ErrorContains(t, err, `discovery "mdns" unknown`)

	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--images", "gpu=x"}, &out, &errb)
	require.ErrorContains(t, err, "component gpu unknown")
	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--cell", "workload=x,trust=system"}, &out, &errb)
	require.ErrorContains(t, err, `workload "x" unknown`)
}
