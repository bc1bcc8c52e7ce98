// Package run orchestrates a conformance run: it builds the reference
// binary, brings up (or reuses) the topology's clusters through a
// clusters.Provider, mints the PKI into the state folder, expands the
// matrix and writes the plan, hands the scenarios suite a run config, runs
// it through test2json and gotestsum while showing its progress, reruns
// failed cases when asked, and writes the run's reports (package reports)
// before bringing the clusters down again unless asked to keep them. It
// also applies the release gate to a finished run (ApplyGate).
package run
