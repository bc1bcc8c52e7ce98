package matrix

import (
	"fmt"
	"strings"
)

// Axes are the values of each axis that a run covers.
type Axes struct {
	Workloads   []Workload
	Trusts      []Trust
	Discoveries []Discovery
	Profiles    []Profile
}

// Default is the secure part of the matrix of `make e2e`: every workload
// kind × every trust source × both discovery modes, in the secure profile
// (24 cells); Plan adds the one insecure cell, InsecureCell. Cells
// hold only the scenarios whose requirements select them, so most DNS
// cells stay empty and are never deployed (catalog.Plan).
func Default() Axes {
	return Axes{Workloads: Workloads, Trusts: Trusts, Discoveries: Discoveries, Profiles: []Profile{Secure}}
}

// Expand lists every cell of the axes, with no duplicates. The order is
// stable and snake-shaped: profile outermost, then discovery, then
// workload, then trust, with the trust order reversed on every other
// workload and the workload order on every other discovery (within a
// profile), so consecutive cells differ in one axis only and switching
// between them redeploys as little as possible (a trust change touches
// only Pylon). An empty Discoveries means EndpointSlice alone; any other
// empty axis expands to nothing; an unknown value is an error.
func (a Axes) Expand() ([]Cell, error) {
	ws, ts, ds, ps := dedup(a.Workloads), dedup(a.Trusts), dedup(a.Discoveries), dedup(a.Profiles)
	if len(ds) == 0 {
		ds = []Discovery{EndpointSlice}
	}
	var cells []Cell
	n := 0
	for _, p := range ps {
		for i, d := range ds {
			wo := ws
			if i%2 == 1 {
				wo = reversed(ws)
			}
			for _, w := range wo {
				order := ts
				if n%2 == 1 {
					order = reversed(ts)
				}
				n++
				for _, t := range order {
					c := Cell{Workload: w, Trust: t, Profile: p, Discovery: d}
					if err := c.Validate(); err != nil {
						return nil, err
					}
					cells = append(cells, c.Normalize())
				}
			}
		}
	}
	return cells, nil
}

// InsecureCell is the one cell of the insecure profile that a plan holds,
// for the scenarios that need that profile: StatefulSet, bundle,
// EndpointSlice.
var InsecureCell = Cell{Workload: StatefulSet, Trust: Bundle, Profile: Insecure, Discovery: EndpointSlice}

// Plan lists the cells a run plans under f, in the order it runs them: the
// secure cells of Default, expanded in snake order over the values f
// names (Narrow, so a filtered run still changes one axis at a time), then
// InsecureCell. f selects among them, its profiles too: ParseFilter("",
// "", "", "insecure") plans InsecureCell alone, and a filter naming one
// value of every axis plans at most that one cell.
func Plan(f Filter) ([]Cell, error) {
	axes := f
	axes.Profiles = nil // the secure cells come from Default; the insecure one is InsecureCell
	cells, err := Default().Narrow(axes).Expand()
	if err != nil {
		return nil, err
	}
	return f.Apply(append(cells, InsecureCell)), nil
}

// Filter selects cells; an empty list on an axis selects every value.
type Filter struct {
	Workloads   []Workload
	Trusts      []Trust
	Discoveries []Discovery
	Profiles    []Profile
}

// ParseFilter builds a filter from comma lists as a CLI takes them, e.g.
// ParseFilter("deployment,mixed", "bundle", "dns", ""). Empty strings
// select all.
func ParseFilter(workloads, trusts, discoveries, profiles string) (Filter, error) {
	var f Filter
	for _, w := range splitList(workloads) {
		if !contains(Workloads, Workload(w)) {
			return Filter{}, fmt.Errorf("workload filter %q: unknown value %q; want some of %s", workloads, w, Join(Workloads))
		}
		f.Workloads = append(f.Workloads, Workload(w))
	}
	for _, t := range splitList(trusts) {
		if !contains(Trusts, Trust(t)) {
			return Filter{}, fmt.Errorf("trust filter %q: unknown value %q; want some of %s", trusts, t, Join(Trusts))
		}
		f.Trusts = append(f.Trusts, Trust(t))
	}
	for _, d := range splitList(discoveries) {
		if !contains(Discoveries, Discovery(d)) {
			return Filter{}, fmt.Errorf("discovery filter %q: unknown value %q; want some of %s", discoveries, d, Join(Discoveries))
		}
		f.Discoveries = append(f.Discoveries, Discovery(d))
	}
	for _, p := range splitList(profiles) {
		if !contains(Profiles, Profile(p)) {
			return Filter{}, fmt.Errorf("profile filter %q: unknown value %q; want some of %s", profiles, p, Join(Profiles))
		}
		f.Profiles = append(f.Profiles, Profile(p))
	}
	return f, nil
}

// Match reports whether c passes the filter.
func (f Filter) Match(c Cell) bool {
	c = c.Normalize()
	return (len(f.Workloads) == 0 || contains(f.Workloads, c.Workload)) &&
		(len(f.Trusts) == 0 || contains(f.Trusts, c.Trust)) &&
		(len(f.Discoveries) == 0 || contains(f.Discoveries, c.Discovery)) &&
		(len(f.Profiles) == 0 || contains(f.Profiles, c.Profile))
}

// Apply keeps the cells that match, in their order.
func (f Filter) Apply(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if f.Match(c) {
			out = append(out, c)
		}
	}
	return out
}

// Narrow restricts the axes to the filter's values, so a filtered run may
// also name a value outside the axes (e.g. the insecure profile).
func (a Axes) Narrow(f Filter) Axes {
	if len(f.Workloads) > 0 {
		a.Workloads = f.Workloads
	}
	if len(f.Trusts) > 0 {
		a.Trusts = f.Trusts
	}
	if len(f.Discoveries) > 0 {
		a.Discoveries = f.Discoveries
	}
	if len(f.Profiles) > 0 {
		a.Profiles = f.Profiles
	}
	return a
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func dedup[T comparable](list []T) []T {
	var out []T
	for _, v := range list {
		if !contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func reversed[T any](list []T) []T {
	out := make([]T, len(list))
	for i, v := range list {
		out[len(list)-1-i] = v
	}
	return out
}
