package kubelet

import (
	"context"
	"errors"
	"fmt"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"

	"github.com/nvcf/conformance/clusters/internal/guard"
)

// RunInContainer serves `kubectl exec` (without a TTY): cmd runs in the
// container's network namespace, with its volume mounts, hostname and
// environment, and the caller's streams. Binaries come from the host, as
// the image holds only the container's own.
func (k *provider) RunInContainer(ctx context.Context, namespace, podName, container string, cmd []string, attach api.AttachIO) error {
	if attach.TTY() {
		return errdefs.InvalidInput("kubectl exec with a TTY (-t) is not supported by the nvcf process kubelet; drop -t")
	}
	if len(cmd) == 0 {
		return errdefs.InvalidInput("exec: no command")
	}
	r := k.get(namespace, podName)
	if r == nil {
		return errdefs.NotFoundf("pod %s/%s is not on this node", namespace, podName)
	}
	r.mu.Lock()
	var l *launch
	for _, c := range r.ctrs {
		if (c.spec.Name == container || (container == "" && len(r.ctrs) == 1)) && c.state.Running != nil {
			l = c.launch
		}
	}
	netns := r.net.NetNS
	r.mu.Unlock()
	if l == nil {
		return errdefs.NotFoundf("container %q of pod %s/%s is not running", container, namespace, podName)
	}
	x := *l
	x.Argv = cmd
	c, err := k.command(netns, &x)
	if err != nil {
		return err
	}
	c.SysProcAttr.Pdeathsig = 0
	c.Stdin = attach.Stdin()
	if out := attach.Stdout(); out != nil {
		c.Stdout = out
		defer out.Close()
	}
	if errw := attach.Stderr(); errw != nil {
		c.Stderr = errw
		defer errw.Close()
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("exec %v: %w", cmd, err)
	}
	done := make(chan error, 1)
	guard.Go("kubelet: exec wait", func() { done <- c.Wait() })
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(c)
		err = errors.Join(ctx.Err(), <-done)
	}
	return err
}
