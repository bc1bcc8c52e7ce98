package agent

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The launcher passes the write end of a pipe as an inherited file and
// names its descriptor in NotifyFDEnv. The agent writes one message per
// line: "progress <text>", then "ready" or "error <text>", and closes it.
const NotifyFDEnv = "NVCF_AGENT_NOTIFY_FD"

// Message kinds on the notify pipe.
const (
	MsgProgress = "progress"
	MsgReady    = "ready"
	MsgError    = "error"
)

// notifier writes messages to the launcher, if there is one.
type notifier struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func openNotifier() *notifier {
	fd, err := strconv.Atoi(os.Getenv(NotifyFDEnv))
	if err != nil || fd < 3 {
		return &notifier{}
	}
	return &notifier{w: os.NewFile(uintptr(fd), "notify")}
}

func (n *notifier) send(kind, text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.w == nil {
		return
	}
	line := kind
	if text != "" {
		line += " " + strings.ReplaceAll(text, "\n", " ")
	}
	if _, err := fmt.Fprintln(n.w, line); err != nil {
		n.w = nil // the launcher went away; carry on without it
	}
}

func (n *notifier) progress(format string, args ...any) {
	n.send(MsgProgress, fmt.Sprintf(format, args...))
}

func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.w != nil {
		n.w.Close()
		n.w = nil
	}
}
