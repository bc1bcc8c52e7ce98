package local_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectPoints(t *testing.T) {
	all, err := selectPoints("")
	require.NoError(t, err)
	require.Len(t, all, 15)

	bounded, err := selectPoints(crashBounded)
	require.NoError(t, err)
	var names []string
	for _, kp := range bounded {
		names = append(names, kp.cmd+"/"+kp.target)
	}
	require.Equal(t, []string{"up/cli", "up/agent", "up/both", "down/cli", "down/agent", "down/both",
		"run/deploy/cli", "run/fault/agent", "fault/both"}, names)

	// "fault" is fault inject's three points, not run/fault's.
	fault, err := selectPoints("fault")
	require.NoError(t, err)
	require.Len(t, fault, 3)
	for _, kp := range fault {
		require.Equal(t, "fault", kp.cmd)
	}

	_, err = selectPoints("up,run/deplo")
	require.ErrorContains(t, err, `NVCF_CRASHTEST_POINTS: "run/deplo" names no kill point`)
}
