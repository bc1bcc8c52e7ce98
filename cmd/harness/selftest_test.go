package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

func TestSelftestFailureIsAVerdict(t *testing.T) {
	require.Equal(t, exitNonconform, exitCode(fmt.Errorf("x: %w", harnessrun.ErrSelftestFailed)))
}
