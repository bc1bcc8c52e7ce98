package scenarios

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nvcf/conformance/wire/reason"
)

// Doc is a component's /status document. Scenarios read it by the values
// it holds, not by a schema: an inference server id, a Stargate identity or
// a typed reason is a unique string, so "the registration of X is listed"
// and "reason R is reported" hold whatever shape a component (the reference
// roles or a real image's status shim) gives its document.
type Doc struct {
	// Pod is the pod the document came from.
	Pod string
	v   any
}

// Counts reads the top-level object field of the document as counts by
// key (an ingress's "refused", say); an absent field, or a value that is
// not a number, reads as none.
func (d Doc) Counts(field string) map[string]int {
	out := map[string]int{}
	m, _ := d.v.(map[string]any)
	c, _ := m[field].(map[string]any)
	for k, v := range c {
		if n, ok := v.(float64); ok {
			out[k] = int(n)
		}
	}
	return out
}

// String renders the document as JSON, for evidence and messages.
func (d Doc) String() string {
	b, err := json.Marshal(d.v)
	if err != nil {
		return fmt.Sprint(d.v)
	}
	return string(b)
}

// Mentions reports whether some string value of the document holds s as
// a whole name: s itself, or s inside a longer value (a URL, a host:port)
// bounded by characters a name cannot hold. So "echo-pylon" is not
// mentioned by a document that lists only "echo-pylon-bad", nor
// "stargate-1.sg" by "stargate-10.sg".
func (d Doc) Mentions(s string) bool {
	found := false
	walk(d.v, "", func(_ string, v any, _ map[string]any) {
		if str, ok := v.(string); ok && holdsName(str, s) {
			found = true
		}
	})
	return found
}

// holdsName reports whether s occurs in str with no name character
// (letter, digit, '-', '_') right before or after it.
func holdsName(str, s string) bool {
	if s == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(str[i:], s)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(s)
		if (start == 0 || !isNameByte(str[start-1])) && (end == len(str) || !isNameByte(str[end])) {
			return true
		}
		i = start + 1
	}
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// Reasons lists the typed reasons the document reports: the values of
// fields named "reason" (or ending in "Reason"), without duplicates.
func (d Doc) Reasons() []reason.Reason {
	var out []reason.Reason
	walk(d.v, "", func(key string, v any, _ map[string]any) {
		str, ok := v.(string)
		if !ok || str == "" || !isReasonKey(key) {
			return
		}
		if r := reason.Reason(str); !slices.Contains(out, r) {
			out = append(out, r)
		}
	})
	return out
}

// Refusals lists the non-transient reasons the document reports, each
// with its origin: the "origin" field of the object that holds the reason,
// else owner (the role whose document it is). The order is the document's,
// with every object's keys sorted, and each refusal is listed once, so the
// same document always gives the same list.
func (d Doc) Refusals(owner reason.Origin) []reason.Message {
	var out []reason.Message
	walk(d.v, "", func(key string, v any, parent map[string]any) {
		str, ok := v.(string)
		if !ok || str == "" || !isReasonKey(key) || transient(reason.Reason(str)) {
			return
		}
		m := reason.Message{Reason: reason.Reason(str), Origin: owner}
		if o, ok := parent["origin"].(string); ok && o != "" {
			m.Origin = reason.Origin(o)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	})
	return out
}

// Failure returns the document's refusals (Refusals) as an error that
// names the document, nil when there are none. Each refusal is a
// *reason.Error; several are joined, so a judge sees every one of them
// rather than one picked by map order.
func (d Doc) Failure(owner reason.Origin) error {
	rs := d.Refusals(owner)
	if len(rs) == 0 {
		return nil
	}
	errs := make([]error, 0, len(rs)+1)
	for _, m := range rs {
		errs = append(errs, reason.WrapFrom(m.Reason, m.Origin, fmt.Errorf("%s %s refused", owner, d.Pod)))
	}
	errs = append(errs, fmt.Errorf("its /status: %s", d))
	return errors.Join(errs...)
}

// Entries returns the objects of the document that mention s (a Stargate
// identity, say), innermost first.
func (d Doc) Entries(s string) []map[string]any {
	var out []map[string]any
	walk(d.v, "", func(_ string, v any, parent map[string]any) {
		if str, ok := v.(string); ok && parent != nil && strings.Contains(str, s) {
			out = append(out, parent)
		}
	})
	return out
}

// Healthy reports whether an entry looks established: no reason, and a
// state that says so (or a true "registered", "connected" or "ready").
func Healthy(entry map[string]any) bool {
	for k, v := range entry {
		switch x := v.(type) {
		case string:
			if isReasonKey(k) && x != "" {
				return false
			}
		}
	}
	for k, v := range entry {
		switch x := v.(type) {
		case bool:
			if slices.Contains([]string{"registered", "connected", "ready", "up", "ok", "healthy", "active"}, strings.ToLower(k)) && x {
				return true
			}
		case string:
			if slices.Contains([]string{"state", "status", "phase"}, strings.ToLower(k)) {
				s := strings.ToLower(x)
				if slices.Contains([]string{"registered", "connected", "ready", "up", "ok", "active", "established", "watching"}, s) {
					return true
				}
			}
		}
	}
	return false
}

func isReasonKey(k string) bool {
	return strings.EqualFold(k, "reason") || strings.HasSuffix(k, "Reason") || strings.HasSuffix(k, "_reason")
}

// walk visits every leaf of v with its key and the object holding it, an
// object's keys in sorted order.
func walk(v any, key string, visit func(key string, v any, parent map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			c := x[k]
			switch c.(type) {
			case map[string]any, []any:
				walk(c, k, visit)
			default:
				visit(k, c, x)
			}
		}
	case []any:
		for _, c := range x {
			switch c.(type) {
			case map[string]any, []any:
				walk(c, key, visit)
			default:
				visit(key, c, nil)
			}
		}
	default:
		visit(key, v, nil)
	}
}
