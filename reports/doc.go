// Package reports writes per-case results and evidence folders and the
// matrix summary of a run (scenario × cell, and counts per layer). It
// imports no other package of the harness: scenarios write CaseResults,
// the runner reads them back and renders the Summary.
package reports
