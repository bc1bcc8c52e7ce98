package dockerd

import (
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A detached daemon's saved state comes back whole; a folder without one
// is ErrNotFound; a pid file naming a process that is not dockerd is not
// trusted (Stop then never signals it).
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	_, err := Adopt(dir)
	require.ErrorIs(t, err, ErrNotFound)

	cfg := Config{Dir: dir, DataRoot: "/data", Bridge: DefaultBridge, Pools: DefaultPools, Shim: "/bin/nvcf-runc", Detach: true}
	before := hostState{Forwarding: map[string]string{"ip_forward": "0"}, BridgeNF: map[string]string{}, Policy: map[string]string{"filter/FORWARD": "ACCEPT"}, Tables: map[string]bool{"ip filter": true}, TrustKey: true}
	require.NoError(t, saveState(cfg, before))
	// Our own pid: alive, but not a dockerd.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docker.pid"), []byte(strconv.Itoa(os.Getpid())), 0o600))

	d, err := Adopt(dir)
	require.NoError(t, err)
	require.Equal(t, -1, d.Pid(), "a pid that is not dockerd's is not adopted")
	require.Equal(t, before, d.before)
	require.Equal(t, dir, d.cfg.Dir)
	require.Equal(t, netip.MustParsePrefix("198.18.200.1/24"), d.cfg.Bridge)
	require.Equal(t, "unix://"+filepath.Join(dir, "docker.sock"), d.Host())
}
