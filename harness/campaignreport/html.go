package campaignreport

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/model/campaign"
)

//go:embed templates/campaign.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("campaign").Funcs(template.FuncMap{
	"px":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"add":  func(a, b float64) float64 { return a + b },
	"ids":  ids,
	"join": strings.Join,
	"mib":  func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) },
}).Parse(pageTemplate))

// page renders campaign.html: one file, no script, nothing fetched, so it
// opens from a CI artifact as it is.
func page(r campaign.Result, o Options) ([]byte, error) {
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, newPageView(r, o)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type pageView struct {
	R           campaign.Result
	O           Options
	Verdict     string
	VerdictLine string
	Headline    string
	Started     string
	Timeline    timeline
	Invariants  []invariantView
	Violations  []violationView
	Faults      []faultView
	Shrunk      *shrunkView
}

type invariantView struct {
	Name   campaign.Invariant
	Status status
	Checks int
}

type violationView struct {
	campaign.Violation
	Active []string
}

type faultView struct {
	campaign.Fault
	Params  []string
	Applied *campaign.Applied
	// InjectFailed: nothing was applied (see injectFailed).
	InjectFailed bool
	Class        string // fail when the injector reported an error
	Outcome      string
}

type shrunkView struct {
	*Shrunk
	Of       int // faults in the campaign's schedule
	Timeline timeline
	Trials   []trialView
}

type trialView struct {
	N int
	campaign.Trial
}

func newPageView(r campaign.Result, o Options) pageView {
	v := pageView{R: r, O: o, Verdict: verdict(r), VerdictLine: verdictLine(r), Headline: headline(r),
		Timeline: newTimeline("timeline", r, true)}
	if !r.Started.IsZero() {
		v.Started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, inv := range campaign.Invariants {
		v.Invariants = append(v.Invariants, invariantView{Name: inv, Status: statusOf(r, inv), Checks: r.Checks[inv]})
	}
	for _, x := range r.Violations {
		v.Violations = append(v.Violations, violationView{Violation: x, Active: activeFaults(r.Schedule, x.Active)})
	}
	for _, f := range r.Schedule.Faults {
		fv := faultView{Fault: f, Outcome: appliedLine(r, f.ID)}
		for _, k := range slices.Sorted(maps.Keys(f.Params)) {
			fv.Params = append(fv.Params, k+"="+f.Params[k])
		}
		if a, ok := appliedOf(r, f.ID); ok {
			fv.Applied, fv.InjectFailed = &a, injectFailed(a)
			if a.Error != "" {
				fv.Class = "fail"
			}
		}
		v.Faults = append(v.Faults, fv)
	}
	if sh := o.Shrunk; sh != nil {
		sv := &shrunkView{Shrunk: sh, Of: len(r.Schedule.Faults),
			Timeline: newTimeline("shrunk-timeline", campaign.Result{Schedule: sh.Schedule}, false)}
		for i, t := range sh.Trials {
			sv.Trials = append(sv.Trials, trialView{N: i + 1, Trial: t})
		}
		v.Shrunk = sv
	}
	return v
}

// The timeline's geometry, in the SVG's own units (it scales to the page's
// width): fault labels in a gutter on the left, time across the rest.
const (
	svgWidth  = 1320.0
	gutter    = 310.0
	plotRight = svgWidth - 16
	axisH     = 26.0
	faultRowH = 22.0
	invRowH   = 22.0
	sectionH  = 14.0
	labelMax  = 42
)

// timeline is the SVG's content, every shape placed.
type timeline struct {
	ID            string
	Height        float64
	Top, Bottom   float64 // the plot's vertical extent
	PlotH         float64
	Ticks         []tick
	Settle        *span
	Ended         *marker
	Faults        []faultRow
	InvTop        float64
	Invariants    []invRow
	Lines         []marker // a violation's time, across every row
	Total         string
	Left, Right   float64
	HasInvariants bool
}

type tick struct {
	X     float64
	Label string
}

type span struct{ X, W float64 }

type marker struct {
	X     float64
	Title string
}

type faultRow struct {
	ID     int
	Y      float64 // the row's middle
	Label  string
	Title  string
	Sched  span
	Bar    *span // what was applied, over the scheduled bar
	Class  string
	Missed bool // no record: never applied (the campaign was cut first)
	UndoX  *float64
}

type invRow struct {
	Name   campaign.Invariant
	Y      float64
	Segs   []segment
	Marks  []violationMark
	Checks int
}

type segment struct {
	span
	OK    bool
	Title string
}

type violationMark struct {
	X      float64
	Points string // a diamond around (X, row middle)
	Title  string
}

// newTimeline places r's faults, samples and violations over the schedule's
// window plus its settle, stretched to whatever ran longer.
func newTimeline(id string, r campaign.Result, invariants bool) timeline {
	s := r.Schedule
	total := s.Duration + s.Settle
	grow := func(t campaign.Span) { total = max(total, t) }
	grow(r.Ended)
	for _, f := range s.Faults {
		grow(f.End())
	}
	for _, a := range r.Applied {
		grow(a.Healed)
	}
	for _, x := range r.Samples {
		grow(x.At)
	}
	for _, x := range r.Violations {
		grow(x.At)
	}
	if total <= 0 {
		total = campaign.Span(time.Second)
	}
	x := func(t campaign.Span) float64 {
		return gutter + (plotRight-gutter)*float64(t)/float64(total)
	}
	// A sample's interval may reach past the end: cut it at the axis.
	width := func(from, to campaign.Span) span {
		return span{X: x(from), W: max(x(min(to, total))-x(from), 2)}
	}
	tl := timeline{ID: id, Top: axisH, Left: gutter, Right: plotRight, Total: total.String(), HasInvariants: invariants}
	step := tickStep(total.D())
	for t := time.Duration(0); t <= total.D(); t += step {
		tl.Ticks = append(tl.Ticks, tick{X: x(campaign.Span(t)), Label: campaign.Span(t).String()})
	}
	y := axisH
	for _, f := range s.Faults {
		row := faultRow{ID: f.ID, Y: y + faultRowH/2, Label: label(f), Title: f.String(), Sched: width(f.Start, f.End())}
		switch a, ok := appliedOf(r, f.ID); {
		case !invariants:
			// A schedule alone: nothing was applied, nothing is missing.
		case !ok:
			row.Missed = true
			row.Title += "\nnot applied"
		case injectFailed(a):
			bar := row.Sched
			row.Bar, row.Class = &bar, "inject-failed"
			row.Title += "\ninject FAILED: " + a.Error
		default:
			end, class := a.Healed, "applied"
			if end == 0 {
				end, class = max(r.Ended, a.Injected), "applied unhealed"
			}
			bar := width(a.Injected, end)
			row.Bar, row.Class = &bar, class
			row.Title += "\n" + appliedLine(r, f.ID)
			if a.Error != "" {
				ux := x(end)
				row.UndoX = &ux
			}
		}
		tl.Faults = append(tl.Faults, row)
		y += faultRowH
	}
	if invariants {
		y += sectionH
		tl.InvTop = y
		for _, inv := range campaign.Invariants {
			row := invRow{Name: inv, Y: y + invRowH/2, Checks: r.Checks[inv]}
			row.Segs = segments(r.Samples, inv, width)
			for _, v := range r.Violations {
				if v.Invariant != inv {
					continue
				}
				mx, my := x(v.At), row.Y
				title := fmt.Sprintf("%s violated at %s: %s", inv, v.At, v.What)
				row.Marks = append(row.Marks, violationMark{X: mx, Title: title,
					Points: fmt.Sprintf("%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", mx, my-8, mx+6, my, mx, my+8, mx-6, my)})
				tl.Lines = append(tl.Lines, marker{X: mx, Title: title})
			}
			tl.Invariants = append(tl.Invariants, row)
			y += invRowH
		}
	}
	tl.Bottom, tl.PlotH = y, y-axisH
	tl.Height = y + 8
	if s.Settle > 0 {
		tl.Settle = &span{X: x(s.Duration), W: x(s.Duration+s.Settle) - x(s.Duration)}
	}
	if invariants && r.Ended > 0 && r.Ended < total {
		tl.Ended = &marker{X: x(r.Ended), Title: "checking stopped at " + r.Ended.String()}
	}
	return tl
}

// segments draws an invariant's samples: a run of samples with the same
// outcome is one segment (an hour at one a second stays a small page),
// broken where the samples pause, so a stalled checker shows as a gap.
func segments(samples []campaign.Sample, inv campaign.Invariant, width func(from, to campaign.Span) span) []segment {
	var mine []campaign.Sample
	for _, s := range samples {
		if s.Invariant == inv {
			mine = append(mine, s)
		}
	}
	slices.SortStableFunc(mine, func(a, b campaign.Sample) int { return cmp.Compare(a.At, b.At) })
	var gaps []campaign.Span
	for i := 1; i < len(mine); i++ {
		if d := mine[i].At - mine[i-1].At; d > 0 {
			gaps = append(gaps, d)
		}
	}
	every := campaign.Span(time.Second)
	if len(gaps) > 0 {
		slices.Sort(gaps)
		every = gaps[len(gaps)/2]
	}
	var out []segment
	for i := 0; i < len(mine); {
		j := i
		for j+1 < len(mine) && mine[j+1].OK == mine[i].OK && mine[j+1].At-mine[j].At <= 2*every {
			j++
		}
		// Each sample stands for one interval, up to the next sample.
		end := mine[j].At + every
		if j+1 < len(mine) {
			end = min(end, mine[j+1].At)
		}
		word := "ok"
		if !mine[i].OK {
			word = "VIOLATED"
		}
		title := fmt.Sprintf("%s %s at %s", inv, word, mine[i].At)
		if j > i {
			title = fmt.Sprintf("%s %s from %s to %s (%d checks)", inv, word, mine[i].At, mine[j].At, j-i+1)
		}
		if note := mine[j].Note; note != "" {
			title += ": " + note
		}
		out = append(out, segment{span: width(mine[i].At, end), OK: mine[i].OK, Title: title})
		i = j + 1
	}
	return out
}

// tickStep is the axis's step: a round one giving at most a dozen ticks.
func tickStep(total time.Duration) time.Duration {
	for _, s := range []time.Duration{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if step := s * time.Second; total/step <= 12 {
			return step
		}
	}
	return 2 * time.Hour
}

// label is a fault's row label, "#3 partition workers->region-a", cut to fit the gutter.
func label(f campaign.Fault) string {
	l := fmt.Sprintf("#%d %s %s", f.ID, f.Kind, f.Target)
	if r := []rune(l); len(r) > labelMax {
		l = string(r[:labelMax-1]) + "…"
	}
	return l
}
