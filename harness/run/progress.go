package run

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nvcf/conformance/reports"
)

// quietLimit is how long a run may print nothing before the heartbeat
// says what it is still doing (make e2e must never go 30 s without a line).
const quietLimit = 20 * time.Second

// heartbeat wraps the run's terminal output: every write counts as news,
// and after quietLimit without any it prints what the run is doing and
// for how long. Doing names the current activity.
type heartbeat struct {
	mu       sync.Mutex
	w        io.Writer
	start    time.Time
	last     time.Time
	activity string
	since    time.Time
	stop     chan struct{}
	done     chan struct{}
}

func newHeartbeat(w io.Writer, every time.Duration) *heartbeat {
	now := time.Now()
	h := &heartbeat{w: w, start: now, last: now, since: now, stop: make(chan struct{}), done: make(chan struct{})}
	go h.loop(every)
	return h
}

func (h *heartbeat) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = time.Now()
	return h.w.Write(p)
}

// Doing says what the run does now, and prints it.
func (h *heartbeat) Doing(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.activity, h.since, h.last = fmt.Sprintf(format, args...), time.Now(), time.Now()
	fmt.Fprintf(h.w, "[+%s] %s\n", time.Since(h.start).Round(time.Second), h.activity)
}

// Activity records what the run does now without printing it (a progress
// line already said so).
func (h *heartbeat) Activity(a string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.activity, h.since = a, time.Now()
}

func (h *heartbeat) loop(every time.Duration) {
	defer close(h.done)
	t := time.NewTicker(every / 4)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			h.mu.Lock()
			if now.Sub(h.last) >= every && h.activity != "" {
				fmt.Fprintf(h.w, "[+%s] still %s (%s so far)\n", now.Sub(h.start).Round(time.Second), h.activity, now.Sub(h.since).Round(time.Second))
				h.last = now
			}
			h.mu.Unlock()
		}
	}
}

// Close stops the heartbeat.
func (h *heartbeat) Close() {
	close(h.stop)
	<-h.done
}

// suiteOutput splits the suite's output into lines: all of them go to the
// log, the progress lines (reports.ProgressMarker) also to the heartbeat's
// terminal, where the last one names what the suite is doing.
type suiteOutput struct {
	log io.Writer
	hb  *heartbeat
	// label names the suite's environment when a run has several.
	label   string
	partial []byte
}

func (s *suiteOutput) Write(p []byte) (int, error) {
	if _, err := s.log.Write(p); err != nil {
		return 0, err
	}
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(s.partial[:i])
		s.partial = s.partial[i+1:]
		if _, msg, ok := strings.Cut(line, reports.ProgressMarker); ok {
			if s.label != "" {
				msg = s.label + ": " + msg
			}
			fmt.Fprintf(s.hb, "  suite %s\n", msg)
			s.hb.Activity("running the suite: " + activityOf(msg))
		}
	}
}

// activityOf turns a progress line into what is going on: "[+1m2s] start
// 3/40 tls/x[...]" becomes "start 3/40 tls/x[...]".
func activityOf(msg string) string {
	if i := strings.Index(msg, "] "); strings.HasPrefix(msg, "[") && i > 0 {
		msg = msg[i+2:]
	}
	if strings.HasPrefix(msg, "end ") {
		return "between cases (last: " + msg + ")"
	}
	return msg
}
