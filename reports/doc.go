// Package reports holds a run's results and renders every report of it:
// per-case results and evidence folders, JUnit for release gating (one
// testcase per case, with properties), the self-contained HTML report, the
// matrix summary, the release gate's verdict, the diff of two runs and the
// live progress lines. It imports no other package of the harness:
// scenarios write CaseResults, the runner assembles a Run and writes it.
package reports
