package main

import (
	"context"
	"io"

	"github.com/nvcf/conformance/clusters/local"
)

// runContainer is the process kubelet's container wrapper (see
// kubelet.RunWrapper): it bind-mounts a pod's volumes inside the namespaces
// `ip netns exec` created and execs the container's binary. Only the
// kubelet starts it.
func runContainer(_ context.Context, args []string, _, _ io.Writer) error {
	return local.RunContainer(args)
}
