package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
