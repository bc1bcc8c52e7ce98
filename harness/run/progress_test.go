package run

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/internal/syncbuf"
	"github.com/nvcf/conformance/reports"
)

// The suite's progress lines reach the terminal, everything else only the
// log; a quiet spell makes the heartbeat say what is still going on.
func TestSuiteOutputAndHeartbeat(t *testing.T) {
	var term, log syncbuf.Buffer
	hb := newHeartbeat(&term, 200*time.Millisecond)
	defer hb.Close()
	out := &suiteOutput{log: &log, hb: hb}
	_, err := out.Write([]byte("=== RUN   TestScenarios/x\n" + reports.ProgressMarker + "[+3s] deploying cell w"))
	require.NoError(t, err)
	require.NotContains(t, term.String(), "deploying", "half a line waits for its end")
	_, err = out.Write([]byte("=s: applying\n--- PASS: TestScenarios/x (0.00s)\n"))
	require.NoError(t, err)
	require.Equal(t, "  suite [+3s] deploying cell w=s: applying\n", term.String())
	require.Contains(t, log.String(), "--- PASS: TestScenarios/x")
	require.Eventually(t, func() bool {
		return strings.Contains(term.String(), "still running the suite: deploying cell w=s: applying (")
	}, 10*time.Second, 20*time.Millisecond, term.String())
}
