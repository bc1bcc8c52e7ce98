package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/internal/syncbuf"
)

// An interrupted `harness docker -- COMMAND` passes SIGTERM on and waits
// for the command's own clean-up, so that nothing it started outlives the
// daemon; a SIGKILL would leave make's children running.
func TestAnInterruptedCommandCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- runBeside(ctx, []string{"sh", "-c", `trap 'sleep 0.2; echo cleaned up; exit 3' TERM; echo started; while :; do sleep 0.05; done`}, "unix:///nowhere", &out, &out)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "started") }, 10*time.Second, 10*time.Millisecond)
	cancel()
	err := <-done
	require.Error(t, err)
	require.Contains(t, out.String(), "cleaned up", "the command got SIGTERM and finished its clean-up")
}
