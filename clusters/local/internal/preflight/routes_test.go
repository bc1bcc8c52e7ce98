package preflight

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvcf/conformance/clusters/hostlock"

	"github.com/stretchr/testify/require"
)

// The format of /proc/net/route: addresses in host (little-endian) order.
const routeTable = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth0	00000000	0100000A	0003	0	0	0	00000000	0	0	0
eth0	0000000A	00000000	0001	0	0	0	0000FFFF	0	0	0
nvcfbr0	000A12C6	00000000	0001	0	0	0	00FFFFFF	0	0	0
`

func TestReadRoutes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "route")
	require.NoError(t, os.WriteFile(path, []byte(routeTable), 0o644))
	rs, err := ReadRoutes(path)
	require.NoError(t, err)
	require.Equal(t, []Route{
		{"eth0", netip.MustParsePrefix("0.0.0.0/0")},
		{"eth0", netip.MustParsePrefix("10.0.0.0/16")},
		{"nvcfbr0", netip.MustParsePrefix("198.18.10.0/24")},
	}, rs)
}

// A range routed through another interface, as precisely as the provider
// would route it or more, is a problem naming the route; a broader route,
// the default route and routes on the provider's own links are not. The
// routes are the kernel's, in a network namespace this test makes.
func TestRouteOverlapInANamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	hostlock.Shared(t)
	ns := fmt.Sprintf("nvcfpf-%d", rand.IntN(1e6))
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", "vpn0", "type", "veth", "peer", "name", "vpn1")
	ip("link", "add", "nvcfbr0", "type", "bridge")
	ip("link", "set", "vpn0", "up")
	ip("link", "set", "vpn1", "up")
	ip("link", "set", "nvcfbr0", "up")
	ip("route", "add", "198.19.100.128/25", "dev", "vpn0") // inside the load-balancer range: a conflict
	ip("route", "add", "198.0.0.0/8", "dev", "vpn0")       // broader: the provider's routes win
	ip("route", "add", "default", "dev", "vpn0")
	ip("route", "add", "198.18.10.0/24", "dev", "nvcfbr0") // the provider's own
	table, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/route").Output()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "route")
	require.NoError(t, os.WriteFile(path, table, 0o644))

	ours := func(iface string) bool { return strings.HasPrefix(iface, "nvcfbr") }
	err = Run(Checks{RouteTable: path, Ranges: []Range{
		{Prefix: netip.MustParsePrefix("198.18.10.0/24"), Owner: "pods of region-a", Ours: ours},
		{Prefix: netip.MustParsePrefix("198.19.100.0/24"), Owner: "load balancers of region-a", Ours: ours},
		{Prefix: netip.MustParsePrefix("198.19.10.0/24"), Owner: "services of region-a", Ours: ours},
	}})
	require.ErrorIs(t, err, ErrFailed)
	var pe *Error
	require.ErrorAs(t, err, &pe)
	require.Len(t, pe.Problems, 1, "%v", err)
	require.Equal(t, "198.19.100.0/24 (load balancers of region-a) is already routed elsewhere: route 198.19.100.128/25 dev vpn0", pe.Problems[0].What)
	require.Equal(t, "remove that route (`ip route del 198.19.100.128/25 dev vpn0`) or the interface that brings it; the harness keeps its clusters in 198.18.0.0/15", pe.Problems[0].Fix)

	// This machine's own table passes the check when no other program routes the ranges.
	require.NoError(t, Run(Checks{Ranges: []Range{{Prefix: netip.MustParsePrefix("198.19.250.0/24"), Owner: "x", Ours: ours}}}))
}
