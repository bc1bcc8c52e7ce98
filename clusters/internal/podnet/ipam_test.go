package podnet

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIPAMAllocatesRoundRobinAndPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ipam.json")
	m, err := loadIPAM(path, PodPrefix(1))
	require.NoError(t, err)

	a, err := m.Allocate("pod-a")
	require.NoError(t, err)
	require.Equal(t, "198.18.11.2", a.String())
	again, err := m.Allocate("pod-a")
	require.NoError(t, err)
	require.Equal(t, a, again, "allocation is idempotent per key")
	b, err := m.Allocate("pod-b")
	require.NoError(t, err)
	require.Equal(t, "198.18.11.3", b.String())

	require.NoError(t, m.Release("pod-a"))
	c, err := m.Allocate("pod-c")
	require.NoError(t, err)
	require.Equal(t, "198.18.11.4", c.String(), "a freed address is not reused at once")

	// A restarted agent reloads the live allocations and never hands them out again.
	m2, err := loadIPAM(path, PodPrefix(1))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"pod-b": "198.18.11.3", "pod-c": "198.18.11.4"}, m2.state.Allocs)
	d, err := m2.Allocate("pod-d")
	require.NoError(t, err)
	require.Equal(t, "198.18.11.5", d.String())
}

func TestIPAMWrapsAndFills(t *testing.T) {
	m, err := loadIPAM(filepath.Join(t.TempDir(), "ipam.json"), PodPrefix(0))
	require.NoError(t, err)
	seen := map[string]bool{}
	for i := 0; i < 253; i++ {
		a, err := m.Allocate(fmt.Sprint("p", i))
		require.NoError(t, err)
		require.True(t, PodPrefix(0).Contains(a))
		require.NotEqual(t, GatewayOf(0), a)
		require.False(t, seen[a.String()], "duplicate %s", a)
		seen[a.String()] = true
	}
	_, err = m.Allocate("one-too-many")
	require.ErrorContains(t, err, "full")

	require.NoError(t, m.Release("p7")) // 198.18.10.9
	a, err := m.Allocate("late")
	require.NoError(t, err)
	require.Equal(t, "198.18.10.9", a.String(), "after wrapping, the free address is found")
}

func TestIPAMPruneAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ipam.json")
	m, err := loadIPAM(path, PodPrefix(2))
	require.NoError(t, err)
	_, err = m.Allocate("live")
	require.NoError(t, err)
	_, err = m.Allocate("gone")
	require.NoError(t, err)
	freed, err := m.Prune(func(k string) bool { return k == "live" })
	require.NoError(t, err)
	require.Equal(t, []string{"gone"}, freed)
	require.Len(t, m.Allocations(), 1)

	_, err = loadIPAM(path, PodPrefix(3))
	require.ErrorContains(t, err, "cluster order changed")

	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = loadIPAM(path, PodPrefix(2))
	require.ErrorContains(t, err, "corrupt")
}
