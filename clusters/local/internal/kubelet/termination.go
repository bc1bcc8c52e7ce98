package kubelet

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's limits: a message file is read up to 4096 bytes; a message
// taken from the logs is their last 80 lines, at most 2048 bytes.
const (
	terminationFileBytes = 4096
	terminationLogLines  = 80
	terminationLogBytes  = 2048
)

// terminationFile prepares, for one run of spec, the empty host file behind
// its terminationMessagePath (in the container's scratch folder) and the
// bind mount that puts it there; the process writes its last words into
// it. Paths under /dev get none: processes share the host's /dev, where
// the mount point would have to be created; the message then comes from
// the logs only (FallbackToLogsOnError). hostPath is "" when there is no
// file.
func terminationFile(spec *corev1.Container, scratch string) (hostPath string, m *mount, err error) {
	p := spec.TerminationMessagePath
	if p == "" || !path.IsAbs(p) || p == "/dev" || strings.HasPrefix(path.Clean(p), "/dev/") {
		return "", nil, nil
	}
	hostPath = filepath.Join(scratch, "termination-log")
	if err := os.WriteFile(hostPath, nil, 0o666); err != nil {
		return "", nil, fmt.Errorf("termination message file: %w", err)
	}
	return hostPath, &mount{Source: hostPath, Target: path.Clean(p)}, nil
}

// terminationMessage is what the kubelet reports as a terminated container's
// message: what the process wrote to its terminationMessagePath (msgPath,
// read up to 4096 bytes), else, under FallbackToLogsOnError and after a
// non-zero exit, the tail of its log.
func terminationMessage(spec *corev1.Container, exitCode int, msgPath, logPath string) string {
	if msgPath != "" {
		if f, err := os.Open(msgPath); err == nil {
			data, _ := io.ReadAll(io.LimitReader(f, terminationFileBytes))
			f.Close()
			if len(data) > 0 {
				return string(data)
			}
		}
	}
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
