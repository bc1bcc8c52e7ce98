// Package run orchestrates a conformance run: it builds the reference
// binary, brings up (or reuses) the topology's clusters through a
// clusters.Provider, mints the PKI into the state folder, expands the
// matrix, hands the scenarios suite a run config, runs it through
// gotestsum (JUnit into the artifacts folder), writes the matrix summary
// (package reports) and brings the clusters down again unless asked to
// keep them.
package run
