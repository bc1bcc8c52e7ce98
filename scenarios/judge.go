package scenarios

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// judge compares what was observed (the error a Try returned) with e and
// returns nil when they agree, else an error saying what was expected and
// what happened. Every typed refusal the error holds (a step may report
// several, joined) must be an expected reason from an expected origin; a
// reason of e.IfAbsent counts only with the step's proof that the target
// names no pod (a *provenAbsent, absent.go), and an acceptance
// (acceptedError, steperr.go) is no refusal.
func judge(e catalog.Expectation, observed error) error {
	got := reason.Of(observed)
	switch {
	case e.IsPass() && observed == nil:
		return nil
	case e.IsPass():
		return fmt.Errorf("expected pass, got a failure with reason %q: %w", got, observed)
	case observed == nil:
		return fmt.Errorf("expected %s, but it succeeded: nothing refused it", e)
	}
	refusals := refusalsIn(observed)
	if len(refusals) == 0 && wasAccepted(observed) {
		return fmt.Errorf("expected %s, but nothing refused it: %w", e, observed)
	}
	if len(refusals) == 0 {
		return fmt.Errorf("expected %s, got a refusal for another reason, %q: %w", e, reason.Unknown, observed)
	}
	var absent *provenAbsent
	for _, r := range refusals {
		switch {
		case slices.Contains(e.Reasons(), r.Reason):
		case slices.Contains(e.IfAbsent(), r.Reason) && errors.As(observed, &absent):
		case slices.Contains(e.IfAbsent(), r.Reason):
			return fmt.Errorf("expected %s, got %q, which counts only for a target proven to name no pod, and the step proved no such thing: %w", e, r.Reason, observed)
		default:
			return fmt.Errorf("expected %s, got a refusal for another reason, %q: %w", e, r.Reason, observed)
		}
		if len(e.Origins()) > 0 && !slices.Contains(e.Origins(), r.Origin) {
			return fmt.Errorf("expected %s, got %q from another origin, %q: %w", e, r.Reason, originName(r.Origin), observed)
		}
	}
	return nil
}

func originName(o reason.Origin) string {
	if o == "" {
		return "unnamed"
	}
	return string(o)
}

// refusalsIn lists the typed refusals err holds: the outermost
// *reason.Error of each branch of its tree (errors.Join, several %w).
func refusalsIn(err error) []*reason.Error {
	var out []*reason.Error
	var walk func(error)
	walk = func(err error) {
		switch x := err.(type) {
		case nil:
		case *reason.Error:
			out = append(out, x)
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(x.Unwrap())
		}
	}
	walk(err)
	return out
}
