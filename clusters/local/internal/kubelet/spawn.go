package kubelet

import (
	"os/exec"

	"github.com/nvcf/conformance/clusters/local/internal/proc"
)

// startPinned starts a container with Pdeathsig=SIGKILL from the agent's
// one pinned spawner thread (proc.StartPinned says why): the container then
// dies with the agent, and only then.
func startPinned(cmd *exec.Cmd) error { return proc.StartPinned(cmd) }
