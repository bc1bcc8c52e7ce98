package kubelet

import (
	"bytes"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's limits for a message taken from the logs: the last 80 lines,
// at most 2048 bytes.
const (
	terminationLogLines = 80
	terminationLogBytes = 2048
)

// terminationMessage is what the kubelet reports as a terminated container's
// message. Only the FallbackToLogsOnError policy is honoured, from the tail
// of the container's log on a non-zero exit: processes here have no
// /dev/termination-log of their own, so the file policy yields nothing.
func terminationMessage(spec *corev1.Container, exitCode int, logPath string) string {
	if spec.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || exitCode == 0 {
		return ""
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	return logTail(data)
}

// logTail keeps the last terminationLogLines lines of data, then its last
// terminationLogBytes bytes.
func logTail(data []byte) string {
	data = bytes.TrimRight(data, "\n")
	if n := bytes.Count(data, []byte("\n")) + 1; n > terminationLogLines {
		for i := 0; i < n-terminationLogLines; i++ {
			data = data[bytes.IndexByte(data, '\n')+1:]
		}
	}
	if len(data) > terminationLogBytes {
		data = data[len(data)-terminationLogBytes:]
	}
	return string(data)
}
