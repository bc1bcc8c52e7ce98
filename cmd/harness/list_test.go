package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/model/matrix"
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

// The matrix filters of `run`, `bench` and `list` name every value of
// their axis, from package matrix, so a new value cannot be left out.
func TestCellFlagsNameEveryAxisValue(t *testing.T) {
	runFS, _, _, _ := runFlagSet(io.Discard)
	benchFS := flag.NewFlagSet("bench", flag.ContinueOnError)
	matrixFlags(benchFS, &harnessrun.Options{})
	listFS := flag.NewFlagSet("list", flag.ContinueOnError)
	cellFlags(listFS, &harnessrun.Options{}, "with --cases: ")
	axes := map[string]string{
		"workload":  matrix.Join(matrix.Workloads),
		"trust":     matrix.Join(matrix.Trusts),
		"discovery": matrix.Join(matrix.Discoveries),
		"profile":   matrix.Join(matrix.Profiles),
	}
	for _, fs := range []*flag.FlagSet{runFS, benchFS, listFS} {
		for name, values := range axes {
			f := fs.Lookup(name)
			require.NotNil(t, f, "%s has no --%s", fs.Name(), name)
			require.Contains(t, f.Usage, "("+values+")", "%s --%s", fs.Name(), name)
		}
	}
}

// --discovery and --profile reach the plan of `run` and `list --cases`;
// a mistyped value is refused before anything starts.
func TestDiscoveryAndProfileFiltersPlan(t *testing.T) {
	fs, o, _, _ := runFlagSet(io.Discard)
	require.NoError(t, fs.Parse([]string{"--discovery", "dns"}))
	plan, err := o.Plan()
	require.NoError(t, err)
	require.NotEmpty(t, plan)
	for _, c := range plan {
		require.Equal(t, matrix.DNS, c.Cell.Discovery, c.Name())
	}

	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"list", "--cases", "--profile", "insecure"}, &out, &errOut))
	require.Contains(t, out.String(), "tls/explicit-http-insecure-profile[workload=statefulset,trust=bundle,profile=insecure]")
	require.Contains(t, out.String(), "tests in 1 cells")

	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, args := range [][]string{{"--discovery", "mdns"}, {"--profile", "paranoid"}} {
		err := run(context.Background(), append([]string{"run", "--topology", "../../topologies/default.yaml"}, args...), &out, &errOut)
		require.ErrorContains(t, err, args[1])
	}
}
