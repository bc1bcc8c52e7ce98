// Package scenarios is the catalogue of positive and fail-closed
// conformance scenarios, and the e2e-framework suite that runs them.
//
// A Scenario is a value: an ID ("tls/wrong-root"), a layer, labels, the
// matrix cells it applies to, an expectation (Pass, or FailClosed with a
// typed reason) and one Try function that performs its steps against an
// Env. A fail-closed scenario names its positive control, a Pass scenario
// of the same topology; its Try takes a Setting so the very same steps run
// either with the faulty ingredient (Faulty) or with the control's
// configuration (AsControl). The suite runs, per matrix cell:
//   - the control before each fail-closed case: a failed control turns the
//     case into an error, never into a pass;
//   - the case itself, judged against its expectation (a refusal for
//     another reason is a failure);
//   - for each fail-closed scenario, a separate test showing that with the
//     control's configuration the expectation is not met, so no refusal
//     can pass vacuously.
//
// Each scenario is one small constructor in its layer's file (tls.go,
// authority.go, …) that reads as a sentence of named steps; the steps
// live in step files (steps.go, steps_<layer>.go, variants*.go), and one
// explicit list (Catalogue) gathers the constructors. The suite (suite_test.go) skips, with a message, when no
// environment is given; `harness run` (make e2e) gives it one.
package scenarios
