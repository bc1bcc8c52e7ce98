package local

import (
	"context"
	"errors"

	"github.com/nvcf/conformance/clusters/internal/local/agent"
)

// runNode and runLB connect the agent to the process kubelet and the
// load-balancer controller.
func runNode(ctx context.Context, n agent.Node) error {
	return errors.New("process kubelet not wired yet")
}

func runLB(ctx context.Context, l agent.LB) error {
	<-ctx.Done()
	return nil
}
