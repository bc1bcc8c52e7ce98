package reports

import (
	"fmt"
	"io"
)

// Diff is what changed between two runs.
type Diff struct {
	// NewlyFailing failed or errored in the new run and not in the old
	// one (passed, was flaky, or was absent).
	NewlyFailing []Change `json:"newlyFailing,omitempty"`
	// Fixed failed or errored in the old run and passed in the new one.
	Fixed []Change `json:"fixed,omitempty"`
	// NewlyFlaky are flaky in the new run and were not in the old one.
	NewlyFlaky []Change `json:"newlyFlaky,omitempty"`
}

// Change is one case across two runs.
type Change struct {
	Name string `json:"name"`
	// Old and New are the outcomes ("" when absent from that run).
	Old string `json:"old"`
	New string `json:"new"`
	// Message is the new run's message for the case.
	Message string `json:"message,omitempty"`
}

// Empty reports whether nothing changed.
func (d Diff) Empty() bool { return len(d.NewlyFailing)+len(d.Fixed)+len(d.NewlyFlaky) == 0 }

// Compare lists the cases that newly fail, were fixed, or are newly flaky
// from old to new, in the new run's order.
func Compare(old, new Run) Diff {
	before := map[string]CaseResult{}
	for _, c := range old.Cases {
		before[c.Name] = c
	}
	var d Diff
	for _, c := range new.Cases {
		o, had := before[c.Name]
		ch := Change{Name: c.Name, New: label(c), Message: firstLine(c.Message)}
		if had {
			ch.Old = label(o)
		}
		bad := func(r CaseResult) bool { return r.Outcome.Bad() }
		switch {
		case bad(c) && (!had || !bad(o)):
			d.NewlyFailing = append(d.NewlyFailing, ch)
		case c.Outcome == Pass && had && bad(o):
			d.Fixed = append(d.Fixed, ch)
		case c.Outcome == Flaky && (!had || o.Outcome != Flaky):
			d.NewlyFlaky = append(d.NewlyFlaky, ch)
		}
	}
	return d
}

// Text writes the diff for a terminal.
func (d Diff) Text(w io.Writer) error {
	section := func(title string, cs []Change) {
		fmt.Fprintf(w, "%s: %d\n", title, len(cs))
		for _, c := range cs {
			old := c.Old
			if old == "" {
				old = "absent"
			}
			fmt.Fprintf(w, "  %s (%s -> %s)", c.Name, old, c.New)
			if c.Message != "" && c.New != string(Pass) {
				fmt.Fprintf(w, ": %s", c.Message)
			}
			fmt.Fprintln(w)
		}
	}
	section("newly failing", d.NewlyFailing)
	section("fixed", d.Fixed)
	section("newly flaky", d.NewlyFlaky)
	return nil
}
