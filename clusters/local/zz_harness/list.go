package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nvcf/conformance/scenarios"
)

// runList is `harness list`: print the catalogue without running it.
func runList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runRe := fs.String("run", "", "regular expression selecting scenario IDs")
	layers := fs.String("layer", "", "comma-separated layers")
	labels := fs.String("label", "", "comma-separated labels")
	summary := fs.Bool("summary", false, "also print each scenario's one-line summary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := scenarios.ParseFilter(*runRe, *layers, *labels)
	if err != nil {
		return err
	}
	return listCatalogue(stdout, scenarios.Catalogue(), f, *summary)
}

func listCatalogue(w io.Writer, cat []scenarios.Scenario, f scenarios.Filter, summary bool) error {
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
