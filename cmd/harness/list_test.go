package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListPrintsTheCatalogue(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"list", "--layer", "quic"}, &out, &errOut))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, []string{"ID", "LAYER", "EXPECT", "CONTROL", "LABELS"}, strings.Fields(lines[0]))
	require.Contains(t, out.String(), "quic/bad-token")
	require.Contains(t, out.String(), "fail-closed(bad-token from stargate)")
	require.Contains(t, out.String(), "quic/tunnel-up")
	require.NotContains(t, out.String(), "tls/")
	require.True(t, strings.HasSuffix(lines[len(lines)-1], "scenarios"))

	require.Error(t, run(context.Background(), []string{"list", "--layer", "nope"}, &out, &errOut))
}

// The DNS-discovery cells hold cases for every workload kind.
func TestListCasesShowsDNSCellsForEveryWorkloadKind(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"list", "--cases"}, &out, &errOut))
	for _, w := range []string{"statefulset", "deployment", "mixed"} {
		require.Regexp(t, `discovery/srv-dashed-ip\[workload=`+w+`,trust=[a-z-]+,discovery=dns\]`, out.String())
	}
	require.Contains(t, out.String(), "tls/system-roots-lack-server-ca[workload=statefulset,trust=system-plus-bundle]")
	require.Error(t, run(context.Background(), []string{"list", "--cases", "--discovery", "mdns"}, &out, &errOut))
}
