package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	harnessrun "github.com/nvcf/conformance/harness/run"
)

// --image-binary is the one image → binary flag of `up` and `run`:
// comma-separated or repeated, paths made absolute.
func TestImageBinariesFlag(t *testing.T) {
	f := imageBinaries{}
	require.NoError(t, f.Set("stargate=/opt/sg, pylon=/opt/pylon"))
	require.NoError(t, f.Set("nvcf-ref=bin/nvcf-ref"))
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.Equal(t, imageBinaries{"stargate": "/opt/sg", "pylon": "/opt/pylon", "nvcf-ref": filepath.Join(wd, "bin/nvcf-ref")}, f)

	for _, bad := range []string{"stargate", "stargate=", "=/x"} {
		require.Error(t, imageBinaries{}.Set(bad), bad)
	}
}

func TestExitCodesTellVerdictFromHarnessFailure(t *testing.T) {
	require.Equal(t, 0, exitCode(nil))
	require.Equal(t, 0, exitCode(flag.ErrHelp))
	require.Equal(t, 1, exitCode(fmt.Errorf("run: %w: 2 failed", harnessrun.ErrFailed)))
	require.Equal(t, 2, exitCode(fmt.Errorf("run: %w: 3 never ran", harnessrun.ErrIncomplete)))
	require.Equal(t, 2, exitCode(errors.New("bring up topology: boom")))
}

// A run on existing clusters suggests commands (a case's repro, bringing
// kept clusters down) with the provider flags it was given; the embedded
// provider's need none.
func TestProviderArgsRepeatTheFlags(t *testing.T) {
	var pf providerFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	pf.register(fs)
	require.NoError(t, fs.Parse(nil))
	require.Empty(t, pf.args())
	require.NoError(t, fs.Parse([]string{"--provider", "existing", "--kubeconfig", "/k/config", "--context", "workers=w,region-a=a", "--dns", "127.0.0.88:53"}))
	require.Equal(t, []string{"--provider", "existing", "--kubeconfig", "/k/config", "--context", "region-a=a,workers=w", "--dns", "127.0.0.88:53"}, pf.args())
}

// --environments is checked before anything starts: a negative count, and
// more than one environment on a provider that runs one.
func TestEnvironmentsFlag(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"run", "--environments", "-1", "--topology", "../../topologies/default.yaml"}, &out, &errb)
	require.ErrorContains(t, err, "--environments -1: want 1 or more, or 0 for the provider's default")
	err = run(ctx, []string{"run", "--provider", "existing", "--environments", "2", "--kubeconfig", "/nonexistent", "--topology", "../../topologies/default.yaml"}, &out, &errb)
	require.ErrorContains(t, err, "--environments 2: the existing provider runs one environment of a topology")
}
