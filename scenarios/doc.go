// Package scenarios runs the conformance scenarios: their steps, the World
// and Env they run in, the e2e-framework suite, and the judging of what a
// case observed. The scenarios themselves are declared in package
// scenarios/catalog, which the runner and the CLI import instead of this
// one.
//
// Each scenario's steps are one Try, attached to its declaration by ID
// (tries, tries.go). A fail-closed scenario names its positive control, a
// Pass scenario of the same topology; its Try takes a Setting so the very
// same steps run either with the faulty ingredient (Faulty) or with the
// control's configuration (AsControl). The suite runs, per matrix cell:
//   - the control before each fail-closed case: a failed control turns the
//     case into an error, never into a pass;
//   - the case itself, judged against its expectation (judge; a refusal
//     for another reason is a failure);
//   - for each fail-closed scenario, a separate test showing that with the
//     control's configuration the expectation is not met, so no refusal
//     can pass vacuously.
//
// The steps live in step files (steps.go, steps_<layer>.go, variants*.go).
// The suite (suite_test.go) runs exactly the cases the runner planned and
// named in its run config (catalog.RunConfig.Cases); it skips, with a
// message, when no environment is given; `harness run` (make e2e) gives it
// one.
package scenarios
