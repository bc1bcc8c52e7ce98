// Package reports writes the matrix summary and per-case evidence; it imports no other package of the harness.
package reports
