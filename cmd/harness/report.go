package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/nvcf/conformance/reports"
)

// runReport is `harness report`: work with the reports of earlier runs.
//
//	harness report diff OLD NEW   the cases that newly fail, were fixed, or are newly flaky
//	harness report render DIR     write DIR's junit.xml, report.html and summary again from report.json
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	usage := errors.New("report: want `harness report diff OLD NEW` or `harness report render DIR` (OLD, NEW, DIR: artifacts folders or report.json files)")
	if len(args) == 0 {
		return usage
	}
	switch {
	case args[0] == "diff" && len(args) == 3:
		old, err := reports.ReadRun(args[1])
		if err != nil {
			return fmt.Errorf("report diff: %w", err)
		}
		cur, err := reports.ReadRun(args[2])
		if err != nil {
			return fmt.Errorf("report diff: %w", err)
		}
		return reports.Compare(old, cur).Text(stdout)
	case args[0] == "render" && len(args) == 2:
		dir := args[1]
		if filepath.Base(dir) == reports.ReportFile {
			dir = filepath.Dir(dir)
		}
		r, err := reports.ReadRun(dir)
		if err != nil {
			return fmt.Errorf("report render: %w", err)
		}
		if err := r.Write(dir); err != nil {
			return fmt.Errorf("report render: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(dir, reports.JUnitFile), filepath.Join(dir, reports.HTMLFile))
		return nil
	}
	return usage
}
