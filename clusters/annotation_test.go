package clusters

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExternalHostnames(t *testing.T) {
	require.Nil(t, ExternalHostnames(nil))
	require.Equal(t, []string{"echo.region-a.nvcf.test", "quic.region-a.nvcf.test"},
		ExternalHostnames(map[string]string{ExternalHostnamesAnnotation: "echo.region-a.nvcf.test, quic.region-a.nvcf.test,"}))
}
