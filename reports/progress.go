package reports

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressMarker starts every progress line the suite prints, so the
// runner can pick them out of the suite's output and show them live.
const ProgressMarker = "##nvcf-progress## "

// Progress prints a line when a case starts and ends, with the elapsed
// time and an estimate of the time left, and a line for every wait that
// needs explaining (deploying a cell, rolling out a variant). It is safe
// for concurrent use; a nil *Progress prints nothing.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	total   int
	done    int
	start   time.Time
	spent   time.Duration
	running map[string]time.Time
	now     func() time.Time
}

// NewProgress returns a Progress for total planned cases writing to w,
// each line starting with prefix (ProgressMarker for the suite).
func NewProgress(w io.Writer, prefix string, total int) *Progress {
	return &Progress{w: w, prefix: prefix, total: total, start: time.Now(), running: map[string]time.Time{}, now: time.Now}
}

// Start says a case started.
func (p *Progress) Start(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[name] = p.now()
	p.line("start %d/%d %s", p.done+1, p.total, name)
}

// End says a case ended with outcome.
func (p *Progress) End(name string, outcome Outcome, detail string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	took := time.Duration(0)
	if at, ok := p.running[name]; ok {
		took = p.now().Sub(at)
		delete(p.running, name)
	}
	p.done++
	p.spent += took
	line := fmt.Sprintf("end   %d/%d %s %s in %s", p.done, p.total, strings.ToUpper(string(outcome)), name, took.Round(100*time.Millisecond))
	if detail != "" && outcome != Pass {
		line += ": " + firstLine(detail)
	}
	p.line("%s; %s", line, p.eta())
}

// Note explains a wait: "deploying cell X (rollouts of …)".
func (p *Progress) Note(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(format, args...)
}

// eta estimates the time left from the mean duration of the cases done.
func (p *Progress) eta() string {
	left := p.total - p.done
	if p.done == 0 || left <= 0 {
		return "none left"
	}
	mean := p.spent / time.Duration(p.done)
	return fmt.Sprintf("ETA %s for %d left", (mean * time.Duration(left)).Round(time.Second), left)
}

func (p *Progress) line(format string, args ...any) {
	elapsed := p.now().Sub(p.start).Round(time.Second)
	fmt.Fprintf(p.w, "%s[+%s] %s\n", p.prefix, elapsed, fmt.Sprintf(format, args...))
}
