package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/wire/reason"
)

// A role that refuses to start leaves its typed refusal, with the role as
// origin, in the file its container's terminationMessagePath names.
func TestRefusalBecomesTerminationMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "termination-log")
	t.Setenv(reason.TerminationPathEnv, path)
	err := run(context.Background(), []string{"stargate", "--grpc-pylon-dial-addr=https://stargate.region-a.nvcf.test:50071", "--remote-stargate-url=sg.region-b.nvcf.test:50071"}, os.Getenv, io.Discard, io.Discard)
	require.Error(t, err)
	data, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	m, perr := reason.ParseMessage(string(data))
	require.NoError(t, perr, "%s", data)
	require.Equal(t, reason.SchemeRequired, m.Reason, "%s", data)
	require.Equal(t, reason.OriginStargate, m.Origin)
}

func TestNoTerminationFileOutsideAPod(t *testing.T) {
	require.NoError(t, writeTermination("", reason.Message{Reason: reason.NoTrust, Origin: reason.OriginPylon}))
}

func TestRoleFromEnvironmentOnlyWhenArgsStartWithAFlag(t *testing.T) {
	require.Equal(t, []string{"router", "--listen-addr=:1"}, withRole([]string{"--listen-addr=:1"}, "router"))
	require.Equal(t, []string{"router"}, withRole(nil, "router"))
	// An explicit role argument wins over the variable.
	require.Equal(t, []string{"pylon", "--x"}, withRole([]string{"pylon", "--x"}, "router"))
	require.Equal(t, []string{"--x"}, withRole([]string{"--x"}, ""))
}

func TestUnknownRoleNamesTheRoles(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), withRole([]string{"--x"}, "gateway"), os.Getenv, nil, &stderr)
	require.ErrorContains(t, err, `unknown role "gateway"`)
	require.Contains(t, stderr.String(), "stargate")
}
