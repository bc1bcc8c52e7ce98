package catalog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProofSettings(t *testing.T) {
	real, err := ParseReal("stargate, pylon,stargate")
	require.NoError(t, err)
	require.Equal(t, []string{"stargate", "pylon"}, real)
	_, err = ParseReal("stargate,echo")
	require.Error(t, err)
	for _, s := range []string{"", "status", "metrics"} {
		_, err := ParseProofSource(s)
		require.NoError(t, err, s)
	}
	_, err = ParseProofSource("logs")
	require.Error(t, err)
}
