package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/local/internal/state"
)

// An environment whose agent is alive but tearing down (it recorded
// Stopping) is gone to Status and Probe: nothing may reuse clusters that
// are going. The agent here is a process carrying the environment's
// marker, as the provider recognises its agents.
func TestAStoppingEnvironmentIsGone(t *testing.T) {
	root := t.TempDir()
	p := New(Options{StateRoot: root})
	dir := filepath.Join(root, "env")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	agent := exec.Command("sh", "-c", "sleep 600", dir)
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep goes with it
	require.NoError(t, agent.Start())
	t.Cleanup(func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL); _ = agent.Wait() })
	st := &state.State{Spec: clusters.Spec{Name: "env"}, AgentPID: agent.Process.Pid, Marker: dir, Ready: true}
	require.NoError(t, st.Save(dir))
	require.NoError(t, p.(clusters.Prober).Probe(context.Background(), "env"), "running, not stopping")

	st.Stopping = true
	require.NoError(t, st.Save(dir))
	err := p.(clusters.Prober).Probe(context.Background(), "env")
	require.ErrorIs(t, err, clusters.ErrNotFound)
	require.ErrorContains(t, err, "being torn down")
	_, err = p.Status(context.Background(), "env")
	require.ErrorIs(t, err, clusters.ErrNotFound)
}
