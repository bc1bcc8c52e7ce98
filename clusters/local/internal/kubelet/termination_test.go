package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestTerminationMessage(t *testing.T) {
	log := filepath.Join(t.TempDir(), "0.log")
	require.NoError(t, os.WriteFile(log, []byte("starting\nnvcf-ref: no-trust: bundle /x is partially malformed\n"), 0o644))
	fallback := &corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}

	require.Equal(t, "starting\nnvcf-ref: no-trust: bundle /x is partially malformed", terminationMessage(fallback, 1, log))
	require.Empty(t, terminationMessage(fallback, 0, log), "a clean exit keeps no message")
	require.Empty(t, terminationMessage(&corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageReadFile}, 1, log))
	require.Empty(t, terminationMessage(fallback, 1, filepath.Join(t.TempDir(), "absent.log")))
}

func TestLogTailLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("line\n")
	}
	require.Equal(t, terminationLogLines, strings.Count(logTail([]byte(b.String())), "\n")+1)
	long := strings.Repeat("x", 5000)
	require.Equal(t, strings.Repeat("x", terminationLogBytes), logTail([]byte(long)))
}
