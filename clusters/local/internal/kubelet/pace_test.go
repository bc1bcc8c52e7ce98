package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/workqueue"

	"github.com/nvcf/conformance/clusters/internal/podnet"
)

// burst is how many status changes a rollout on one node reports at once:
// more than the 100 that virtual-kubelet's default limiter lets through
// before it delays every enqueue.
const burst = 400

// The pod controller that Run builds paces its status writes per pod: a
// burst of changes across many pods leaves the next pod's update undelayed,
// where virtual-kubelet's default limiter (a token bucket shared by every
// pod, paid into on every enqueue) holds it for (burst-100)/10 s, the time
// a quick-exiting container showed as running in the API.
func TestStatusWritesArePacedPerPod(t *testing.T) {
	var nc nodeutil.NodeConfig
	p := &provider{cfg: Config{NodeName: "n0", Network: &podnet.Cluster{}}}
	cfg := Config{NodeName: "n0", Network: &podnet.Cluster{}, APIServer: netip.MustParseAddrPort("127.0.0.1:6443")}
	for _, o := range nodeOpts(cfg, p, fake.NewClientset(), http.NewServeMux()) {
		require.NoError(t, o(&nc))
	}
	var pc node.PodControllerConfig
	for _, o := range nc.PodControllerConfigOpts {
		require.NoError(t, o(&pc))
	}
	l := pc.SyncPodStatusFromProviderRateLimiter
	require.NotNil(t, l, "Run must set the status queue's limiter, or virtual-kubelet uses its default")

	for i := range burst {
		l.When(fmt.Sprintf("nvcf/pod-%d", i))
	}
	require.Equal(t, 5*time.Millisecond, l.When("nvcf/quick-exit"), "a burst elsewhere does not delay this pod's write")

	// Failed writes of one pod (conflicts) back off, up to statusRetryMax,
	// and start over once a write lands.
	for range 30 {
		l.When("nvcf/conflicted")
	}
	require.Equal(t, statusRetryMax, l.When("nvcf/conflicted"))
	l.Forget("nvcf/conflicted")
	require.Equal(t, 5*time.Millisecond, l.When("nvcf/conflicted"))

	// A write is retried until it lands or the pod is gone, however often it failed.
	delay, err := pc.SyncPodStatusFromProviderShouldRetryFunc(context.Background(), "nvcf/conflicted", 1000, time.Now().Add(-time.Hour), errors.New("conflict"))
	require.NoError(t, err)
	require.Nil(t, delay, "the limiter's back-off applies")

	// What the default would have done to the same pod.
	def := workqueue.DefaultTypedControllerRateLimiter[any]()
	for i := range burst {
		def.When(fmt.Sprintf("nvcf/pod-%d", i))
	}
	require.Greater(t, def.When("nvcf/quick-exit"), 25*time.Second)
}
