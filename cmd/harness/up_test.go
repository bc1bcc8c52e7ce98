package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestImageFlag(t *testing.T) {
	f := imageFlag{}
	require.NoError(t, f.Set("nvcf-ref=/opt/nvcf-ref"))
	require.Equal(t, "/opt/nvcf-ref", f["nvcf-ref"])
	require.Error(t, f.Set("nvcf-ref"))
	require.Error(t, f.Set("=/x"))
}
