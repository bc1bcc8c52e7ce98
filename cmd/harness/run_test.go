package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseImageBinaries(t *testing.T) {
	m, err := parseImageBinaries("stargate=/opt/sg, pylon=/opt/pylon")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"stargate": "/opt/sg", "pylon": "/opt/pylon"}, m)

	for _, bad := range []string{"stargate", "stargate=", "=/x", "stargate=relative/path"} {
		_, err := parseImageBinaries(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "--image-binary")
	}
}
