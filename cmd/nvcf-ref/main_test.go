package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoleFromEnvironmentOnlyWhenArgsStartWithAFlag(t *testing.T) {
	require.Equal(t, []string{"router", "--listen-addr=:1"}, withRole([]string{"--listen-addr=:1"}, "router"))
	require.Equal(t, []string{"router"}, withRole(nil, "router"))
	// An explicit role argument wins over the variable.
	require.Equal(t, []string{"pylon", "--x"}, withRole([]string{"pylon", "--x"}, "router"))
	require.Equal(t, []string{"--x"}, withRole([]string{"--x"}, ""))
}

func TestUnknownRoleNamesTheRoles(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), withRole([]string{"--x"}, "gateway"), nil, &stderr)
	require.ErrorContains(t, err, `unknown role "gateway"`)
	require.Contains(t, stderr.String(), "stargate")
}
