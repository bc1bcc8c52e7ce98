package campaignreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/nvcf/conformance/model/campaign"
)

// headline is the campaign in one sentence, for every report's top.
func headline(r campaign.Result) string {
	s := r.Schedule
	h := fmt.Sprintf("seed %d", s.Seed)
	if s.Topology != "" {
		h += ", topology " + s.Topology
	}
	h += fmt.Sprintf(", %d faults over %s, settle %s, %d Pylons", len(s.Faults), s.Duration, s.Settle, len(r.Pylons))
	if len(r.BadPylons) > 0 {
		h += fmt.Sprintf(" (+%d bad-trust)", len(r.BadPylons))
	}
	return h + ", checked until " + r.Ended.String()
}

// verdictLine says the verdict and why, in one line.
func verdictLine(r campaign.Result) string {
	v := verdict(r)
	switch v {
	case "FAIL":
		var names []string
		for _, inv := range r.Violated() {
			names = append(names, string(inv))
		}
		return fmt.Sprintf("FAIL: %d of %d invariants violated (%s)", len(names), len(campaign.Invariants), strings.Join(names, ", "))
	case "ERROR":
		if r.Error != "" {
			return "ERROR: the engine failed, no verdict: " + firstLine(r.Error)
		}
		return "ERROR: an invariant was never checked, no verdict"
	}
	return fmt.Sprintf("PASS: all %d invariants checked and held", len(campaign.Invariants))
}

// Text writes the console summary printed when a campaign ends: the
// verdict, one line per invariant with its check count and first
// violation, the engine's failure and the faults that failed. Where the
// reports are is the caller's to print.
func Text(w io.Writer, r campaign.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "campaign %s\n%s\n", headline(r), verdictLine(r))
	for _, inv := range campaign.Invariants {
		s := statusOf(r, inv)
		line := fmt.Sprintf("  %-16s %-8s %6d checks", inv, s.Word, r.Checks[inv])
		if s.Count > 1 {
			line += fmt.Sprintf(", %d violations", s.Count)
		}
		if s.Detail != "" {
			line += "  " + s.Detail
		}
		b.WriteString(line + "\n")
	}
	for _, f := range r.Schedule.Faults {
		if a, ok := appliedOf(r, f.ID); ok && a.Error != "" {
			fmt.Fprintf(&b, "  fault #%d %s %s: %s\n", f.ID, f.Kind, f.Target, appliedLine(r, f.ID))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdown is summary.md: the verdict, each invariant, the schedule with
// what became of each fault, and the commands that replay it.
func markdown(r campaign.Result, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault campaign, seed %d: %s\n\n", r.Schedule.Seed, verdict(r))
	fmt.Fprintf(&b, "**%s**\n\n%s.\n", verdictLine(r), headline(r))
	if !r.Started.IsZero() {
		fmt.Fprintf(&b, "Started %s.\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "\nThe engine failed:\n\n```\n%s\n```\n", strings.TrimRight(r.Error, "\n"))
	}
	b.WriteString("\n## Invariants\n\n")
	for _, inv := range campaign.Invariants {
		s := statusOf(r, inv)
		fmt.Fprintf(&b, "- %s: **%s**", inv, s.Word)
		if s.Detail != "" {
			b.WriteString(" " + s.Detail)
		}
		fmt.Fprintf(&b, " (%d checks", r.Checks[inv])
		if s.Count > 1 {
			fmt.Fprintf(&b, ", %d violations", s.Count)
		}
		b.WriteString(")\n")
	}
	b.WriteString("\n## Schedule\n\n")
	writeFaults(&b, r.Schedule.Faults, func(id int) string { return appliedLine(r, id) })
	b.WriteString("\n## Replay\n\n")
	if o.Replay != "" {
		fmt.Fprintf(&b, "```\n%s\n```\n", o.Replay)
	} else {
		fmt.Fprintf(&b, "Replay `%s` with the campaign command.\n", ScheduleFile)
	}
	if sh := o.Shrunk; sh != nil {
		fmt.Fprintf(&b, "\n## Shrunk schedule (%s)\n\n", sh.Invariant)
		fmt.Fprintf(&b, "%d of %d faults still violate %s (%d trials; `%s`):\n\n",
			len(sh.Schedule.Faults), len(r.Schedule.Faults), sh.Invariant, len(sh.Trials), ShrunkScheduleFile)
		writeFaults(&b, sh.Schedule.Faults, nil)
		if sh.Err != "" {
			fmt.Fprintf(&b, "\nThe search stopped early (%s): the schedule violates, but may not be minimal.\n", sh.Err)
		}
		if sh.Replay != "" {
			fmt.Fprintf(&b, "\n```\n%s\n```\n", sh.Replay)
		}
	}
	return b.String()
}

// writeFaults lists faults one a line in a code block, where markdown
// leaves their params (often with * or _) alone; outcome, when set, adds
// what became of each.
func writeFaults(b *strings.Builder, faults []campaign.Fault, outcome func(id int) string) {
	if len(faults) == 0 {
		b.WriteString("No faults.\n")
		return
	}
	b.WriteString("```\n")
	for _, f := range faults {
		b.WriteString(f.String())
		if outcome != nil {
			b.WriteString("  → " + outcome(f.ID))
		}
		b.WriteString("\n")
	}
	b.WriteString("```\n")
}
