package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	harnessrun "github.com/nvcf/conformance/harness/run"
	"github.com/nvcf/conformance/scenarios/catalog"
)

// runList is `harness list`: print the catalogue without running it.
func runList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harnessrun.Options
	fs.StringVar(&o.Run, "run", "", "regular expression selecting scenario IDs")
	fs.StringVar(&o.Layers, "layer", "", "comma-separated layers")
	fs.StringVar(&o.Labels, "label", "", "comma-separated labels")
	summary := fs.Bool("summary", false, "also print each scenario's one-line summary")
	cases := fs.Bool("cases", false, "print the planned test cases of the matrix (scenario × cell) instead, with counts per layer")
	cellFlags(fs, &o, "with --cases: ")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cases {
		plan, err := o.Plan()
		if err != nil {
			return err
		}
		return listCases(stdout, plan)
	}
	f, err := catalog.ParseFilter(o.Run, o.Layers, o.Labels)
	if err != nil {
		return err
	}
	return listCatalogue(stdout, catalog.Catalogue(), f, *summary)
}

// listCases prints every test of the plan (a fail-closed case adds its
// control-configuration test) and the number of tests per layer.
func listCases(w io.Writer, plan []catalog.Case) error {
	perLayer := map[catalog.Layer]int{}
	total := 0
	for _, c := range plan {
		fmt.Fprintln(w, c.Name())
		perLayer[c.Scenario.Layer]++
		if !c.Scenario.Expect.IsPass() {
			fmt.Fprintln(w, c.ControlConfigName())
			perLayer[c.Scenario.Layer]++
		}
	}
	fmt.Fprintln(w)
	for _, l := range catalog.Layers {
		fmt.Fprintf(w, "%-13s %d\n", l, perLayer[l])
		total += perLayer[l]
	}
	_, err := fmt.Fprintf(w, "%-13s %d tests in %d cells\n", "total", total, len(catalog.Cells(plan)))
	return err
}

func listCatalogue(w io.Writer, cat []catalog.Scenario, f catalog.Filter, summary bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tLAYER\tEXPECT\tCONTROL\tLABELS"
	if summary {
		head += "\tSUMMARY"
	}
	fmt.Fprintln(tw, head)
	n := 0
	for _, s := range cat {
		if !f.Match(s) {
			continue
		}
		n++
		ctl := s.Control
		if ctl == "" {
			ctl = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", s.ID, s.Layer, s.Expect, ctl, strings.Join(s.Labels, ","))
		if summary {
			line += "\t" + s.Summary
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d scenarios\n", n)
	return err
}
