// Package catalog declares the conformance scenarios and plans their runs,
// and holds nothing that runs a case: it is what the runner (harness/run)
// and the CLI (cmd/harness) need, and all the suite (package scenarios)
// is handed.
//
// A Scenario is a value: an ID ("tls/wrong-root"), a layer, labels, the
// matrix cells it applies to (Requirements), an expectation (Pass, or
// FailClosed with typed reasons from named origins), the positive control
// of a fail-closed scenario and the epic requirements it covers. Each one
// is a small constructor in its layer's file (tls.go, authority.go, …)
// whose comments say why the case separates what it does; one explicit
// list (Catalogue) gathers them. Their steps live in package scenarios,
// attached by ID.
//
// Plan lists the cases (a scenario in a matrix cell) a run's filters
// select, in the order they run; Divide splits a plan over several
// environments. The runner computes the plan once and hands it to the
// suite by name in the RunConfig (Cases), which the suite resolves
// against the catalogue (Resolve) instead of planning again.
package catalog
