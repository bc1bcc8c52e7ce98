package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
)

// An agent that stopped itself after a panic leaves the panic beside its
// log; status says so, the next down returns it as the CLI's error (a
// run's own down included), and only once.
func TestDownReportsTheAgentsPanicOnce(t *testing.T) {
	root := t.TempDir()
	p := New(Options{StateRoot: root})
	dir := filepath.Join(root, "env")
	require.NoError(t, os.MkdirAll(agent.LogDir(dir), 0o700))
	line := "the agent panicked in lb: tcp connection: upstream gone (stack in the agent log)"
	require.NoError(t, os.WriteFile(filepath.Join(agent.LogDir(dir), "panic.txt"), []byte(line+"\n"), 0o600))

	_, err := p.Status(context.Background(), "env")
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorContains(t, err, `"env" stopped after its agent panicked: `+line)

	err = p.Down(context.Background(), "env")
	require.ErrorIs(t, err, ErrAgent)
	require.ErrorContains(t, err, `environment "env" had stopped: `+line+"; agent log: "+filepath.Join(agent.LogDir(dir), "agent.log"))
	require.NoError(t, p.Down(context.Background(), "env"), "reported once")
}
