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

	require.Equal(t, "starting\nnvcf-ref: no-trust: bundle /x is partially malformed", terminationMessage(fallback, 1, "", log))
	require.Empty(t, terminationMessage(fallback, 0, "", log), "a clean exit keeps no message")
	require.Empty(t, terminationMessage(&corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageReadFile}, 1, "", log))
	require.Empty(t, terminationMessage(fallback, 1, "", filepath.Join(t.TempDir(), "absent.log")))
}

// What the process wrote to its terminationMessagePath is the message,
// whatever the policy and exit code; an empty file falls back to the logs.
func TestTerminationMessageFile(t *testing.T) {
	scratch := t.TempDir()
	log := filepath.Join(scratch, "0.log")
	require.NoError(t, os.WriteFile(log, []byte("some log line\n"), 0o644))
	spec := &corev1.Container{TerminationMessagePath: "/var/run/nvcf/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}

	host, m, err := terminationFile(spec, scratch)
	require.NoError(t, err)
	require.Equal(t, &mount{Source: host, Target: "/var/run/nvcf/termination-log"}, m)
	require.Equal(t, "some log line", terminationMessage(spec, 1, host, log), "nothing written: the log tail")

	msg := `{"reason":"no-trust","origin":"pylon"}`
	require.NoError(t, os.WriteFile(host, []byte(msg), 0o644))
	require.Equal(t, msg, terminationMessage(spec, 1, host, log))
	require.Equal(t, msg, terminationMessage(&corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageReadFile}, 0, host, log))

	require.NoError(t, os.WriteFile(host, []byte(strings.Repeat("x", 5000)), 0o644))
	require.Len(t, terminationMessage(spec, 1, host, log), terminationFileBytes)

	// A new run starts with an empty file: no message of the previous run survives.
	_, _, err = terminationFile(spec, scratch)
	require.NoError(t, err)
	require.Equal(t, "some log line", terminationMessage(spec, 1, host, log))

	// /dev is the host's: no mount point is made there.
	host, m, err = terminationFile(&corev1.Container{TerminationMessagePath: "/dev/termination-log"}, scratch)
	require.NoError(t, err)
	require.Empty(t, host)
	require.Nil(t, m)
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
