package kind

import (
	"fmt"
	"io"
	"strings"
	"sync"

	kindlog "sigs.k8s.io/kind/pkg/log"
)

// logger passes kind's status lines (verbosity 0) and warnings to the
// progress writer, one line each, and drops its debug output.
type logger struct {
	mu *sync.Mutex
	w  io.Writer
}

var _ kindlog.Logger = logger{}

func newLogger(w io.Writer) logger { return logger{mu: &sync.Mutex{}, w: w} }

func (l logger) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		// The network override is ours, on purpose.
		if t := strings.TrimSpace(ln); t != "" && !strings.Contains(t, "KIND_EXPERIMENTAL_DOCKER_NETWORK") && !strings.Contains(t, "Here be dragons") {
			fmt.Fprintf(l.w, "  kind: %s\n", t)
		}
	}
}

func (l logger) Warn(m string)                     { l.line(m) }
func (l logger) Warnf(f string, a ...interface{})  { l.line(fmt.Sprintf(f, a...)) }
func (l logger) Error(m string)                    { l.line(m) }
func (l logger) Errorf(f string, a ...interface{}) { l.line(fmt.Sprintf(f, a...)) }

func (l logger) V(level kindlog.Level) kindlog.InfoLogger {
	return infoLogger{l: l, on: level <= 0}
}

type infoLogger struct {
	l  logger
	on bool
}

func (i infoLogger) Info(m string) {
	if i.on {
		i.l.line(m)
	}
}

func (i infoLogger) Infof(f string, a ...interface{}) {
	if i.on {
		i.l.line(fmt.Sprintf(f, a...))
	}
}

func (i infoLogger) Enabled() bool { return i.on }
