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
	require.False(t, strings.Contains(s, "http://"))

	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--images", "gpu=x"}, &out, &errb)
	require.ErrorContains(t, err, "component gpu unknown")
	err = runManifests(context.Background(), []string{"--topology", "../../topologies/default.yaml", "--cell", "workload=x,trust=system"}, &out, &errb)
	require.ErrorContains(t, err, `workload "x" unknown`)
}
