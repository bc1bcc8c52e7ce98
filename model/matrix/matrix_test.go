package matrix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultExpandsInSnakeOrder(t *testing.T) {
	cells, err := Default().Expand()
	require.NoError(t, err)
	var names []string
	for _, c := range cells {
		names = append(names, c.Name())
	}
	require.Equal(t, []string{
		"workload=statefulset,trust=system",
		"workload=statefulset,trust=bundle",
		"workload=statefulset,trust=system-plus-bundle",
		"workload=statefulset,trust=grpc-override",
		"workload=deployment,trust=grpc-override",
		"workload=deployment,trust=system-plus-bundle",
		"workload=deployment,trust=bundle",
		"workload=deployment,trust=system",
		"workload=mixed,trust=system",
		"workload=mixed,trust=bundle",
		"workload=mixed,trust=system-plus-bundle",
		"workload=mixed,trust=grpc-override",
		"workload=mixed,trust=grpc-override,discovery=dns",
		"workload=mixed,trust=system-plus-bundle,discovery=dns",
		"workload=mixed,trust=bundle,discovery=dns",
		"workload=mixed,trust=system,discovery=dns",
		"workload=deployment,trust=system,discovery=dns",
		"workload=deployment,trust=bundle,discovery=dns",
		"workload=deployment,trust=system-plus-bundle,discovery=dns",
		"workload=deployment,trust=grpc-override,discovery=dns",
		"workload=statefulset,trust=grpc-override,discovery=dns",
		"workload=statefulset,trust=system-plus-bundle,discovery=dns",
		"workload=statefulset,trust=bundle,discovery=dns",
		"workload=statefulset,trust=system,discovery=dns",
	}, names)
	// Consecutive cells differ in exactly one axis.
	for i := 1; i < len(cells); i++ {
		diff := 0
		if cells[i].Workload != cells[i-1].Workload {
			diff++
		}
		if cells[i].Trust != cells[i-1].Trust {
			diff++
		}
		if cells[i].Discovery != cells[i-1].Discovery {
			diff++
		}
		require.Equal(t, 1, diff, "%s -> %s", cells[i-1], cells[i])
	}
}

func TestExpandDeduplicatesAndRejectsUnknown(t *testing.T) {
	cells, err := Axes{Workloads: []Workload{Deployment, Deployment}, Trusts: []Trust{Bundle}, Profiles: []Profile{Secure, Insecure}}.Expand()
	require.NoError(t, err)
	require.Equal(t, []Cell{
		{Deployment, Bundle, Secure, EndpointSlice},
		{Deployment, Bundle, Insecure, EndpointSlice},
	}, cells)
	require.Equal(t, "workload=deployment,trust=bundle,profile=insecure", cells[1].Name())

	_, err = Axes{Workloads: []Workload{"daemonset"}, Trusts: Trusts, Profiles: []Profile{Secure}}.Expand()
	require.ErrorContains(t, err, `workload "daemonset" unknown`)

	cells, err = Axes{Workloads: Workloads, Profiles: []Profile{Secure}}.Expand()
	require.NoError(t, err)
	require.Empty(t, cells)
}

func TestParseCellRoundTrips(t *testing.T) {
	cells, err := Axes{Workloads: Workloads, Trusts: Trusts, Discoveries: Discoveries, Profiles: Profiles}.Expand()
	require.NoError(t, err)
	require.Len(t, cells, 48)
	for _, c := range cells {
		got, err := ParseCell(c.Name())
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
	got, err := ParseCell("trust=system, workload=mixed")
	require.NoError(t, err)
	require.Equal(t, Cell{Mixed, System, Secure, EndpointSlice}, got)
	got, err = ParseCell("workload=deployment,discovery=dns,trust=system-plus-bundle")
	require.NoError(t, err)
	require.Equal(t, Cell{Deployment, SystemPlusBundle, Secure, DNS}, got)
	require.Equal(t, "workload=deployment,trust=system-plus-bundle,discovery=dns", got.Name())
	// The default discovery is never named, so existing cells keep their names.
	require.Equal(t, "workload=deployment,trust=bundle", Cell{Workload: Deployment, Trust: Bundle, Discovery: EndpointSlice}.Name())
}

func TestParseCellErrorsNameTheInput(t *testing.T) {
	for in, want := range map[string]string{
		"workload=deployment":                        "workload and trust are both required",
		"workload=deployment,trust=bundle,x=1":       `key "x" unknown`,
		"workload=deployment,trust=pinned":           `trust "pinned" unknown`,
		"workload=deployment,trust=bundle,profile":   `"profile" is not key=value`,
		"workload=a,workload=b,trust=system":         `key "workload" given twice`,
		"workload=mixed,trust=system,discovery=mdns": `discovery "mdns" unknown`,
	} {
		_, err := ParseCell(in)
		require.ErrorContains(t, err, want, in)
		require.ErrorContains(t, err, in)
	}
}

func TestKindFor(t *testing.T) {
	require.Equal(t, KindStatefulSet, Cell{Workload: StatefulSet}.KindFor(1))
	require.Equal(t, KindDeployment, Cell{Workload: Deployment}.KindFor(0))
	require.Equal(t, KindStatefulSet, Cell{Workload: Mixed}.KindFor(0))
	require.Equal(t, KindDeployment, Cell{Workload: Mixed}.KindFor(1))
	require.Equal(t, KindDeployment, Cell{Workload: Mixed}.KindFor(2))
}

func TestFilter(t *testing.T) {
	cells, err := Default().Expand()
	require.NoError(t, err)

	f, err := ParseFilter("deployment, mixed", "bundle", "", "")
	require.NoError(t, err)
	got := f.Apply(cells)
	require.Equal(t, []Cell{{Deployment, Bundle, Secure, EndpointSlice}, {Mixed, Bundle, Secure, EndpointSlice},
		{Mixed, Bundle, Secure, DNS}, {Deployment, Bundle, Secure, DNS}}, got)

	dns, err := ParseFilter("", "system", "dns", "")
	require.NoError(t, err)
	require.Equal(t, []Cell{{Mixed, System, Secure, DNS}, {Deployment, System, Secure, DNS}, {StatefulSet, System, Secure, DNS}}, dns.Apply(cells))

	all, err := ParseFilter("", "", "", "")
	require.NoError(t, err)
	require.Equal(t, cells, all.Apply(cells))

	_, err = ParseFilter("", "pinned", "", "")
	require.ErrorContains(t, err, `unknown value "pinned"`)
	_, err = ParseFilter("replicaset", "", "", "")
	require.ErrorContains(t, err, `unknown value "replicaset"`)
	_, err = ParseFilter("", "", "mdns", "")
	require.ErrorContains(t, err, `unknown value "mdns"`)
	_, err = ParseFilter("", "", "", "paranoid")
	require.ErrorContains(t, err, `unknown value "paranoid"`)

	// A profile outside the default axes is reachable through Narrow.
	ins, err := ParseFilter("statefulset", "", "endpointslice", "insecure")
	require.NoError(t, err)
	require.Empty(t, ins.Apply(cells))
	narrowed, err := Default().Narrow(ins).Expand()
	require.NoError(t, err)
	require.Len(t, narrowed, 4)
	for _, c := range narrowed {
		require.Equal(t, Insecure, c.Profile)
		require.True(t, ins.Match(c))
	}
}

// The plan is the default matrix's secure cells in snake order, then the
// one insecure cell; a filter selects among them, the profile too.
func TestPlan(t *testing.T) {
	all, err := Plan(Filter{})
	require.NoError(t, err)
	secure, err := Default().Expand()
	require.NoError(t, err)
	require.Len(t, all, 25, "24 secure cells (4 trusts × 3 workloads × 2 discoveries) and one insecure")
	require.Equal(t, secure, all[:24])
	require.Equal(t, Cell{StatefulSet, Bundle, Insecure, EndpointSlice}, all[24])
	require.Equal(t, InsecureCell, all[24])

	plan := func(w, tr, d, p string) []Cell {
		t.Helper()
		f, err := ParseFilter(w, tr, d, p)
		require.NoError(t, err)
		cells, err := Plan(f)
		require.NoError(t, err)
		return cells
	}
	dep := plan("deployment", "system,bundle", "", "")
	require.Equal(t, []Cell{{Deployment, System, Secure, EndpointSlice}, {Deployment, Bundle, Secure, EndpointSlice},
		{Deployment, Bundle, Secure, DNS}, {Deployment, System, Secure, DNS}},
		dep, "two trusts × two discoveries in snake order; the insecure cell is a StatefulSet one, filtered out")
	dns := plan("", "", "dns", "")
	require.Len(t, dns, 12, "the insecure cell uses EndpointSlice discovery, filtered out")
	for _, c := range dns {
		require.Equal(t, DNS, c.Discovery)
	}
	require.Equal(t, []Cell{InsecureCell}, plan("", "", "", "insecure"), "the insecure profile is one cell, not an expansion")
	require.Equal(t, secure, plan("", "", "", "secure"))
	require.Equal(t, []Cell{InsecureCell}, plan("statefulset", "bundle", "endpointslice", "insecure"))
	require.Equal(t, []Cell{{StatefulSet, Bundle, Secure, EndpointSlice}}, plan("statefulset", "bundle", "endpointslice", "secure"))
	require.Empty(t, plan("deployment", "", "", "insecure"))

	_, err = Plan(Filter{Workloads: []Workload{"daemonset"}})
	require.ErrorContains(t, err, "daemonset")
}
