package bench

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/reports"
)

// Profile is where the matrix's time went.
type Profile struct {
	// Matrix is the whole run's wall time; Cases the time during which
	// some case ran (the rest is PKI minting, the suite's start and
	// reports); CaseTime the sum of the cases' durations, more than Cases
	// when cases ran at the same time.
	Matrix, Cases, CaseTime time.Duration
	// CPU is the CPU time the environments and the runner used during
	// the matrix (2 cores: at most twice the wall time).
	CPU time.Duration
	// Environments is how many environments ran parts of the matrix at
	// the same time.
	Environments int
	// Deploy is the time spent switching cells (rolling the fixtures out
	// for the next cell), part of the first case of each cell.
	Deploy  time.Duration
	Deploys int
	ByLayer []Slice
	ByCell  []Slice
	Slowest []Slice
}

// Slice is one group of cases: its wall time (while one of them ran,
// counted once however many ran at the same time), the sum of their
// durations, and the CPU time used during the wall time.
type Slice struct {
	Name                string
	Cases               int
	Wall, CaseTime, CPU time.Duration
	Deploy              time.Duration
	spans               []span
}

// span is when one case ran.
type span struct{ from, to time.Time }

// union merges spans and returns the merged ones.
func union(spans []span) []span {
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b span) int { return a.from.Compare(b.from) })
	var out []span
	for _, s := range sorted {
		if n := len(out); n > 0 && !s.from.After(out[n-1].to) {
			if s.to.After(out[n-1].to) {
				out[n-1].to = s.to
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// add counts case c in the slice.
func (s *Slice) add(c reports.CaseResult) {
	s.Cases++
	s.CaseTime += c.Duration
	s.spans = append(s.spans, span{c.Start, c.Start.Add(c.Duration)})
}

// settle fills Wall and CPU from the slice's spans.
func (s *Slice) settle(samples []cpuSample) {
	s.Wall, s.CPU = 0, 0
	for _, u := range union(s.spans) {
		s.Wall += u.to.Sub(u.from)
		s.CPU += cpuBetween(samples, u.from, u.to)
	}
}

// cellDeployed matches the suite log's line for a cell switch.
var cellDeployed = regexp.MustCompile(`msg="cell deployed" cell="([^"]*)" took=(\S+)`)

// profile groups the run's case results by layer and by cell and charges
// each the CPU time sampled while it ran; the cell switches come from the
// suite logs (one per environment of the run).
func profile(cases []reports.CaseResult, suiteLogs []string, matrix time.Duration, samples []cpuSample) *Profile {
	p := &Profile{Matrix: matrix, Environments: len(suiteLogs)}
	if len(samples) > 1 {
		p.CPU = samples[len(samples)-1].cpu - samples[0].cpu
	}
	deploys := map[string]time.Duration{}
	for _, log := range suiteLogs {
		f, err := os.Open(log)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := cellDeployed.FindStringSubmatch(sc.Text()); m != nil {
				if d, err := time.ParseDuration(m[2]); err == nil {
					deploys[m[1]] += d
					p.Deploy += d
					p.Deploys++
				}
			}
		}
		f.Close()
	}
	layers, cells := map[string]*Slice{}, map[string]*Slice{}
	all := &Slice{}
	group := func(m map[string]*Slice, key string) *Slice {
		if m[key] == nil {
			m[key] = &Slice{Name: key}
		}
		return m[key]
	}
	for _, c := range cases {
		if c.Start.IsZero() {
			continue
		}
		group(layers, c.Layer).add(c)
		group(cells, c.Cell).add(c)
		all.add(c)
		one := Slice{Name: c.Name}
		one.add(c)
		one.settle(samples)
		p.Slowest = append(p.Slowest, one)
	}
	all.settle(samples)
	p.Cases, p.CaseTime = all.Wall, all.CaseTime
	for cell, d := range deploys {
		if s := cells[cell]; s != nil {
			s.Deploy = d
		}
	}
	sorted := func(m map[string]*Slice) []Slice {
		var out []Slice
		for _, s := range m {
			s.settle(samples)
			out = append(out, *s)
		}
		slices.SortFunc(out, func(a, b Slice) int { return int(b.Wall - a.Wall) })
		return out
	}
	p.ByLayer, p.ByCell = sorted(layers), sorted(cells)
	slices.SortFunc(p.Slowest, func(a, b Slice) int { return int(b.Wall - a.Wall) })
	p.Slowest = p.Slowest[:min(len(p.Slowest), 10)]
	return p
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// cpuShare is CPU time over wall time, as cores busy.
func cpuShare(cpu, wall time.Duration) string {
	if wall <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", cpu.Seconds()/wall.Seconds())
}

// Markdown renders the profile's tables.
func (p *Profile) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Where the matrix's time goes\n\n")
	fmt.Fprintf(&b, "Matrix %s s: cases running %s s (of which %d cell switches %s s), the rest (PKI, suite start, reports) %s s; "+
		"the cases' own durations add up to %s s, as isolated cases run at the same time. "+
		"CPU used by the %d environment(s) and the runner: %s s, %s cores busy on average; the rest of the wall time is waiting.\n\n",
		secs(p.Matrix), secs(p.Cases), p.Deploys, secs(p.Deploy), secs(p.Matrix-p.Cases), secs(p.CaseTime), p.Environments, secs(p.CPU), cpuShare(p.CPU, p.Matrix))
	fmt.Fprintf(&b, "Wall s is the time while at least one of the row's cases ran; case s adds up their own durations. "+
		"A layer's cases run between other layers' in the same cell, so the layers' wall times overlap.\n\n")
	table := func(title string, rows []Slice, deploy bool) {
		fmt.Fprintf(&b, "| %s | cases | wall s | case s | CPU s | cores busy |", title)
		if deploy {
			fmt.Fprintf(&b, " cell switch s |")
		}
		fmt.Fprintf(&b, "\n|---|---|---|---|---|---|")
		if deploy {
			fmt.Fprintf(&b, "---|")
		}
		fmt.Fprintln(&b)
		for _, s := range rows {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |", s.Name, s.Cases, secs(s.Wall), secs(s.CaseTime), secs(s.CPU), cpuShare(s.CPU, s.Wall))
			if deploy {
				fmt.Fprintf(&b, " %s |", secs(s.Deploy))
			}
			fmt.Fprintln(&b)
		}
		fmt.Fprintln(&b)
	}
	table("layer", p.ByLayer, false)
	table("cell", p.ByCell, true)
	table("slowest cases", p.Slowest, false)
	return b.String()
}
