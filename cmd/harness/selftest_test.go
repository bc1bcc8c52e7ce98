package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/fixtures/defects"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

func TestSelftestListsTheRegistry(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"selftest", "--list"}, &out, &errOut))
	require.Contains(t, out.String(), "stargate-srv-dashed-ip")
	require.Contains(t, out.String(), "router-default-backend")
	out.Reset()
	require.NoError(t, run(context.Background(), []string{"selftest", "--list", "--epic"}, &out, &errOut))
	require.NotContains(t, out.String(), "router-default-backend", "not an epic item")
	require.Contains(t, out.String(), "epic 4")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Regexp(t, `^\d+ defects$`, lines[len(lines)-1])

	err := run(context.Background(), []string{"selftest", "--defect", "no-such-defect"}, &out, &errOut)
	require.ErrorContains(t, err, `unknown defect "no-such-defect"`)
	require.Equal(t, exitHarnessFail, exitCode(err))
}

// A defect only a fault sequence reveals is listed with its campaign
// invariant and sequence, and selftest refuses to run it alone.
func TestSelftestLeavesCampaignDefectsToTheCampaign(t *testing.T) {
	var out, errOut bytes.Buffer
	name := string(defects.StargateKeepsLapsedLease)
	require.NoError(t, run(context.Background(), []string{"selftest", "--list", "--defect", name}, &out, &errOut))
	require.Contains(t, out.String(), "caught by harness campaign, invariant I4-no-leaks")
	require.Contains(t, out.String(), "pylon-leave")
	err := run(context.Background(), []string{"selftest", "--defect", name}, &out, &errOut)
	require.ErrorContains(t, err, "only a sequence of faults reveals them; run `harness campaign`")
	require.Equal(t, exitHarnessFail, exitCode(err))
}

func TestSelftestFailureIsAVerdict(t *testing.T) {
	require.Equal(t, exitNonconform, exitCode(fmt.Errorf("x: %w", harnessrun.ErrSelftestFailed)))
}
