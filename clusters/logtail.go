package clusters

import (
	"os"
	"strings"
)

// LogTail returns the last n lines of the log file at path, indented on
// lines of their own, for an error that points at the log ("" when it
// cannot be read).
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}
