package scenarios

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/nvcf/conformance/fixtures/deploy"
	"github.com/nvcf/conformance/fixtures/wire/reason"
	stargatepb "github.com/nvcf/conformance/fixtures/wire/stargatepb"
	"github.com/nvcf/conformance/harness/probe"
)

// remoteWatched returns the first remote region the bootstrap region watches.
func remoteWatched(e *Env) (string, error) {
	c, _ := e.Topology.Cluster(e.Bootstrap())
	if c.Stargate == nil || len(c.Stargate.RemoteWatch) == 0 {
		return "", fmt.Errorf("region %s watches no remote region in topology %q", c.Name, e.Topology.Name)
	}
	return c.Stargate.RemoteWatch[0], nil
}

// crossRegionWatch requires the bootstrap region to hand out the remote
// region's https watch URL, and watching it to yield that region's
// Stargates.
func crossRegionWatch(ctx context.Context, e *Env, _ Setting) error {
	remote, err := remoteWatched(e)
	if err != nil {
		return err
	}
	want := deploy.GRPCURL(e.Topology, remote)
	resp, err := e.Probe.WatchUntil(ctx, e.Ingress(e.Bootstrap()), func(r *stargatepb.WatchStargatesResponse) bool {
		return slices.Contains(r.GetWatchStargateUrls(), want)
	})
	if err != nil {
		return fmt.Errorf("region %s never handed out the watch URL %s: %w", e.Bootstrap(), want, err)
	}
	for _, u := range resp.GetWatchStargateUrls() {
		if !strings.HasPrefix(u, "https://") {
			return refusedWith(reason.SchemeRequired, "watch URL %q is not an explicit https:// URL", u)
		}
	}
	// Watch the remote region as Pylon would: through the URL handed out.
	pu, err := url.Parse(want)
	if err != nil {
		return err
	}
	t := probe.GRPCTarget{Addr: pu.Host, TLS: e.Trusted(pu.Hostname())}
	if _, _, err := net.SplitHostPort(pu.Host); err != nil {
		return fmt.Errorf("watch URL %q has no port: %w", want, err)
	}
	r2, err := e.Probe.Watch(ctx, t)
	if err != nil {
		return err
	}
	suffix := e.Identity(remote, "")
	hosts := advertisedHosts(r2)
	if len(hosts) == 0 {
		return fmt.Errorf("watching %s yielded no Stargate", want)
	}
	for _, h := range hosts {
		if !strings.HasSuffix(h, suffix) {
			return fmt.Errorf("watching %s yielded %q, not an identity of region %s", want, h, remote)
		}
	}
	return nil
}

// loneStargateWatchingRemote starts a lone Stargate called variant in the
// bootstrap region whose remote watch URL is mangled by bad (kept as is
// with the control's configuration) and reads whether it watches the
// remote region or refuses.
func loneStargateWatchingRemote(variant string, bad func(string) string) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		remote, err := remoteWatched(e)
		if err != nil {
			return err
		}
		u := deploy.GRPCURL(e.Topology, remote)
		if s == Faulty {
			u = bad(u)
		}
		return e.WithStargate(ctx, e.Bootstrap(), variant, []string{u}, func(ctx context.Context, pod string) error {
			return e.StargateOutcome(ctx, e.Bootstrap(), pod, e.Topology.GRPCHost(remote))
		})
	}
}

// The bad remote watch URLs of loneStargateWatchingRemote.

func withoutScheme(u string) string { return strings.TrimPrefix(u, "https://") }

func overHTTP(u string) string { return strings.Replace(u, "https://", "http://", 1) }
