package scenarios

import (
	"errors"
	"fmt"

	"github.com/nvcf/conformance/wire/reason"
)

// stepError is the failure of a step the harness performs around the
// behaviour under test: deploying or deleting a variant, starting or
// undoing a fault, restoring a certificate, waiting for a rollout or a
// deletion, asking the Stargates. It says nothing about the system under
// test, so it makes the case an Error naming the step, whatever else the
// case observed: a refusal joined beside it cannot turn it into a pass,
// and leftover state is blamed on the case that left it, not on the next.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// stepFailed marks err (nil stays nil) as the failure of step.
func stepFailed(step string, err error) error {
	if err == nil {
		return nil
	}
	return &stepError{step: step, err: err}
}

// stepFailure finds a step's failure anywhere in err's tree (also behind
// a refusal in an errors.Join).
func stepFailure(err error) *stepError {
	var se *stepError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// withCleanup joins the error of a cleanup (a deferred undo) to the
// error of the steps it followed, as a step's failure.
func withCleanup(err error, step string, cerr error) error {
	if cerr == nil {
		return err
	}
	return errors.Join(err, stepFailed(step, cerr))
}

// blocked is the message of a case that did not run because the cell's
// baseline was broken before it.
func blocked(cause error) string {
	return fmt.Sprintf("blocked: the cell's baseline was broken before the case ran, so it has no verdict: %v", cause)
}

// acceptedError is what the server side showed after an attempt nothing
// refused (a registration that landed on another replica, say). It is no
// refusal: a fail-closed case that observes it was accepted, and the
// reports say so ("accepted"), not "unknown".
type acceptedError struct{ err error }

func (e *acceptedError) Error() string { return "accepted, but " + e.err.Error() }
func (e *acceptedError) Unwrap() error { return e.err }

// accepted marks err (nil stays nil), observed after an acceptance, as an
// acceptedError.
func accepted(err error) error {
	if err == nil {
		return nil
	}
	return &acceptedError{err: err}
}

// wasAccepted reports whether err holds an acceptedError.
func wasAccepted(err error) bool {
	var a *acceptedError
	return errors.As(err, &a)
}

// observedReason is the reason a case's result records: the typed reason
// of observed, or none when it holds no refusal but an acceptance.
func observedReason(observed error) string {
	if wasAccepted(observed) && len(refusalsIn(observed)) == 0 {
		return ""
	}
	return string(reason.Of(observed))
}

// ErrNotProven is what a case observes when nothing the system under test
// exposes can prove a claim it needs (a real Stargate names no
// registrations by id, say): no verdict on the system under test, and never
// a pass. The case is reported as skipped, "NOT PROVEN", with the reason.
var ErrNotProven = errors.New("NOT PROVEN")

// notProvenError says which claim could not be proven, and why.
type notProvenError struct{ claim, why string }

func (e *notProvenError) Error() string {
	return fmt.Sprintf("%s: %s: %s", ErrNotProven, e.claim, e.why)
}

// Is makes a notProvenError ErrNotProven.
func (e *notProvenError) Is(target error) bool { return target == ErrNotProven }

// notProven reports claim as unprovable, for why.
func notProven(claim, why string) error { return &notProvenError{claim: claim, why: why} }
