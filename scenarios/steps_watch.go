package scenarios

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/scenarios/probe"
	"github.com/nvcf/conformance/wire/reason"
	stargatepb "github.com/nvcf/conformance/wire/stargatepb"
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
	return loneStargateWatchingRemoteAs(variant, func(_ *Env, _, u string) (string, error) { return bad(u), nil })
}

// loneStargateWatchingRemoteAs is loneStargateWatchingRemote with a
// faulty URL that needs the environment (the remote region's addresses).
func loneStargateWatchingRemoteAs(variant string, bad func(e *Env, remote, u string) (string, error)) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		remote, err := remoteWatched(e)
		if err != nil {
			return err
		}
		u := deploy.GRPCURL(e.Topology, remote)
		if s == Faulty {
			if u, err = bad(e, remote, u); err != nil {
				return err
			}
		}
		return e.WithStargate(ctx, e.Bootstrap(), variant, []string{u}, func(ctx context.Context, pod string) error {
			if byMetrics(e.Config) {
				return e.remoteWatchHandedOut(ctx, e.Bootstrap(), pod, remote, u)
			}
			// The Stargate names each remote by the host it was given.
			return e.StargateOutcome(ctx, e.Bootstrap(), pod, hostOf(u))
		})
	}
}

// remoteWatchHandedOut is StargateOutcome for a Stargate without /status:
// NVCF's. It has no remote-watch client of its own; it republishes each
// --remote-stargate-url, trimmed and otherwise as given, in the
// watch_stargate_urls of its WatchStargates answers, and the Pylons
// watching it dial them (NVCF's Pylon dials a scheme-less one as
// http://: defect 5). So nothing of it ever reaches the remote region's
// ingress, and what it does with the URL shows on its own WatchStargates
// answer, asked on the pod (plaintext, its own gRPC port, no :authority
// naming a peer, so it answers itself). Refused: the container ended (its
// termination message, typed on the reference, else unknown and quoted).
// Watched: it hands out an explicit https:// URL of the remote region's
// gRPC host, and that URL, watched over TLS verified against the run's
// root as a Pylon would, yields only that region's Stargates. Anything
// else it hands out for the remote host (scheme-less, http://) is an
// acceptance of the bad URL: the case fails as "accepted", with the
// answer in the evidence (remote-watch.txt), never as a timeout.
func (e *Env) remoteWatchHandedOut(ctx context.Context, region, pod, remote, given string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	host := e.Topology.GRPCHost(remote)
	var decided error
	var resp *stargatepb.WatchStargatesResponse
	var ev strings.Builder
	fmt.Fprintf(&ev, "Stargate %s/%s, given --remote-stargate-url=%s\n", region, pod, given)
	err = e.Eventually(ctx, "Stargate "+pod+" to hand out its remote watch URL or refuse", waitConverge, func(ctx context.Context) error {
		ip, exited, err := e.stargateVariantIP(ctx, cs, pod)
		if err != nil || exited != nil {
			decided = exited
			return err
		}
		t := probe.GRPCTarget{Addr: net.JoinHostPort(ip, strconv.Itoa(manifests.GRPCPort)), TLS: probe.TLS{Plaintext: true}}
		// Given an empty URL there is none to wait for: any answer says the
		// Stargate started and took it.
		r, err := e.Probe.WatchUntil(ctx, t, func(r *stargatepb.WatchStargatesResponse) bool {
			return len(r.GetWatchStargateUrls()) > 0 || (given == "" && len(r.GetStargates()) > 0)
		})
		if err != nil {
			return fmt.Errorf("Stargate %s neither refused nor answered WatchStargates with a watch URL: %w", pod, err)
		}
		resp = r
		fmt.Fprintf(&ev, "WatchStargates on %s: watch_stargate_urls=%q stargates=%v\n", t.Addr, r.GetWatchStargateUrls(), advertisedHosts(r))
		return nil
	})
	if err != nil {
		_ = e.noteEvidence("remote-watch.txt", ev.String())
		return reason.Wrap(reason.Timeout, err)
	}
	if decided != nil {
		fmt.Fprintf(&ev, "refused: %v\n", decided)
		_ = e.noteEvidence("remote-watch.txt", ev.String())
		return decided
	}
	if given == "" {
		err := accepted(fmt.Errorf("the Stargate started without refusing an empty remote watch URL and hands out watch_stargate_urls %q", resp.GetWatchStargateUrls()))
		fmt.Fprintf(&ev, "verdict: %v\n", err)
		_ = e.noteEvidence("remote-watch.txt", ev.String())
		return err
	}
	var handed []string
	for _, u := range resp.GetWatchStargateUrls() {
		if hostOf(u) == host {
			handed = append(handed, u)
		}
	}
	verdict := e.watchedOverTLS(ctx, remote, handed)
	fmt.Fprintf(&ev, "verdict: %v\n", verdict)
	_ = e.noteEvidence("remote-watch.txt", ev.String())
	return verdict
}

// watchedOverTLS checks the watch URLs a Stargate hands out for remote's
// gRPC host: each must be an explicit https:// URL that, watched over TLS
// verified against the run's root, yields only remote's Stargates. A URL
// that is not https:// is an acceptance (accepted): the Stargate took it
// and passes it on to every Pylon.
func (e *Env) watchedOverTLS(ctx context.Context, remote string, handed []string) error {
	if len(handed) == 0 {
		return fmt.Errorf("the Stargate hands out no watch URL for %s", e.Topology.GRPCHost(remote))
	}
	suffix := e.Identity(remote, "")
	for _, u := range handed {
		if !strings.HasPrefix(u, "https://") {
			return accepted(fmt.Errorf("the Stargate started without refusing and hands out the remote watch URL %q to every watcher (WatchStargates watch_stargate_urls); a Pylon dials a URL that is not explicit https:// in plaintext (defect 5)", u))
		}
		pu, err := url.Parse(u)
		if err != nil {
			return err
		}
		if _, _, err := net.SplitHostPort(pu.Host); err != nil {
			return fmt.Errorf("watch URL %q has no port: %w", u, err)
		}
		r, err := e.Probe.Watch(ctx, probe.GRPCTarget{Addr: pu.Host, TLS: e.Trusted(pu.Hostname())})
		if err != nil {
			return fmt.Errorf("watching the handed-out URL %s over TLS: %w", u, err)
		}
		hosts := advertisedHosts(r)
		if len(hosts) == 0 {
			return fmt.Errorf("watching %s yielded no Stargate", u)
		}
		for _, h := range hosts {
			if !strings.HasSuffix(h, suffix) {
				return fmt.Errorf("watching %s yielded %q, not an identity of region %s", u, h, remote)
			}
		}
	}
	return nil
}

// The bad remote watch URLs of loneStargateWatchingRemote.

func withoutScheme(u string) string { return strings.TrimPrefix(u, "https://") }

func overHTTP(u string) string { return strings.Replace(u, "https://", "http://", 1) }

// emptied leaves an address input empty.
func emptied(string) string { return "" }

// remoteWatchedByStargate is try for a claim about a Stargate's own remote
// watch client. NVCF's Stargate has none (it hands each URL on to the
// Pylons, see remoteWatchHandedOut), so on it the faulty attempt proves
// nothing about the Stargate: NOT PROVEN.
func remoteWatchedByStargate(try Try) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		if s == Faulty && byMetrics(e.Config) {
			return notProven("the Stargate verifies a remote region's certificate against the host it dials",
				"NVCF's Stargate has no remote-watch client: it hands the URL to the Pylons, whose verification of an IP literal tls/ip-literal-bootstrap checks")
		}
		return try(ctx, e, s)
	}
}

// byIngressIP names the remote region's ingress by its load balancer's IP
// (same scheme, port and certificate).
func byIngressIP(e *Env, remote, _ string) (string, error) {
	lb, err := e.loadBalancer(remote, manifests.GRPCService, manifests.GRPCPort)
	if err != nil {
		return "", fmt.Errorf("the remote ingress's IP: %w", err)
	}
	return "https://" + lb.String(), nil
}
