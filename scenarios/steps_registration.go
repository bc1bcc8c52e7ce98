package scenarios

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/scenarios/probe"
	"github.com/nvcf/conformance/wire/reason"
	stargatepb "github.com/nvcf/conformance/wire/stargatepb"
)

// PylonRegisteredEverywhere waits until the Pylon called name holds a
// healthy registration with every ready Stargate of every region and no
// registration of it is failing (after a disturbance it recovers first).
// At the deadline the error carries the last reason Pylon reported.
func (e *Env) PylonRegisteredEverywhere(ctx context.Context, name string, d time.Duration) error {
	var last error
	err := e.Eventually(ctx, "Pylon "+name+" registered with every Stargate of every region", d, func(ctx context.Context) error {
		doc, err := e.PylonStatus(ctx, name)
		if err != nil {
			return err
		}
		for _, r := range e.Regions() {
			pods, err := e.StargatePods(ctx, r)
			if err != nil {
				return err
			}
			for _, p := range pods {
				if !stillHealthy(doc, e.Identity(r, p.Name)) {
					last = fmt.Errorf("pylon %s holds no healthy registration with %s: %s", name, e.Identity(r, p.Name), doc)
					if f := doc.Failure(reason.OriginPylon); f != nil {
						last = fmt.Errorf("%w: %w", last, f)
					}
					return last
				}
			}
		}
		return nil
	})
	if err != nil && last != nil && reason.Of(last) != reason.Unknown {
		return fmt.Errorf("%w (%w)", last, err)
	}
	return err
}

// explicitHTTPS requires the Pylon's bootstrap address and every gRPC dial
// address and watch URL each region hands out to be explicit https:// URIs.
func explicitHTTPS(ctx context.Context, e *Env, _ Setting) error {
	cs, err := e.Kube(e.Workers())
	if err != nil {
		return err
	}
	d, err := cs.AppsV1().Deployments(e.Deployed.Namespace).Get(ctx, manifests.PylonName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read the Pylon Deployment: %w", err)
	}
	boot := envOf(d.Spec.Template.Spec.Containers, manifests.EnvBootstrap)
	if !strings.HasPrefix(boot, "https://") {
		return refusedWith(reason.SchemeRequired, "Pylon's %s is %q, not an explicit https:// URI", manifests.EnvBootstrap, boot)
	}
	for _, r := range e.Regions() {
		resp, err := e.Probe.Watch(ctx, e.Ingress(r))
		if err != nil {
			return err
		}
		for _, s := range resp.GetStargates() {
			if a := s.GetGrpcPylonDialAddr(); a != "" && !strings.HasPrefix(a, "https://") {
				return refusedWith(reason.SchemeRequired, "region %s advertises %s with grpc_pylon_dial_addr %q, not an explicit https:// URI", r, s.GetStargateId(), a)
			}
		}
		for _, u := range resp.GetWatchStargateUrls() {
			if !strings.HasPrefix(u, "https://") {
				return refusedWith(reason.SchemeRequired, "region %s hands out watch URL %q, not an explicit https:// URI", r, u)
			}
		}
	}
	return nil
}

// envOf is the value of the environment variable name in containers.
func envOf(cs []corev1.Container, name string) string {
	for _, c := range cs {
		for _, v := range c.Env {
			if v.Name == name {
				return v.Value
			}
		}
	}
	return ""
}

// rogueAck registers a rogue inference server asking for a reverse tunnel
// and requires the ack to name the Stargate's identity as tunnel target
// and a host:port to dial.
func rogueAck(ctx context.Context, e *Env, _ Setting) error {
	region := e.Bootstrap()
	p, err := firstPod(ctx, e, region)
	if err != nil {
		return err
	}
	id := e.Identity(region, p.Name)
	rogue := uniqueID("rogue")
	reg, err := e.Probe.Register(ctx, e.ingressNaming(region, p.Name), rogueRegistration(rogue))
	if err != nil {
		return err
	}
	defer reg.Close()
	if err := e.heldExactlyOn(ctx, presence{id: rogue, model: probeModel(rogue), on: []string{region + "/" + p.Name}}); err != nil {
		return err
	}
	ack := reg.Ack
	if got := hostOf(ack.GetReverseTunnelTarget()); got != id {
		return fmt.Errorf("ack names tunnel target %q, want the identity %q", ack.GetReverseTunnelTarget(), id)
	}
	if _, _, err := net.SplitHostPort(ack.GetReverseTunnelPylonDialAddr()); err != nil {
		return fmt.Errorf("ack's reverse_tunnel_pylon_dial_addr %q is not host:port: %w", ack.GetReverseTunnelPylonDialAddr(), err)
	}
	return nil
}

// dialAddrFlag is the Stargate flag naming the gRPC dial address it
// advertises to Pylons.
const dialAddrFlag = "--grpc-pylon-dial-addr="

// loneStargateAdvertising starts a lone Stargate of the bootstrap region
// whose --grpc-pylon-dial-addr is the region's own (the control) or that
// address made bad by bad, and reads what it did with it: refused at
// start-up (its termination message), or advertised. Advertised, it must
// be in the Stargate's own WatchStargates answer, asked on the pod, exactly
// as given and explicit https://; a bad address it advertises is an
// acceptance, since every Pylon watching it is handed that address.
func loneStargateAdvertising(variant string, bad func(string) string) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		region := e.Bootstrap()
		given := deploy.GRPCURL(e.Topology, region)
		if s == Faulty {
			given = bad(given)
		}
		edit := func(args []string) []string { return withFlag(args, dialAddrFlag, given) }
		return e.WithStargateArgs(ctx, region, variant, edit, func(ctx context.Context, pod string) error {
			return e.dialAddrAdvertised(ctx, region, pod, given)
		})
	}
}

// dialAddrAdvertised waits for the lone Stargate pod to refuse (exit with a
// termination message) or to advertise a gRPC dial address for itself in
// its own WatchStargates answer, and judges that address against given.
func (e *Env) dialAddrAdvertised(ctx context.Context, region, pod, given string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	var decided error
	var ev strings.Builder
	fmt.Fprintf(&ev, "Stargate %s/%s, given %s%s\n", region, pod, dialAddrFlag, given)
	var advertised []string
	err = e.Eventually(ctx, "Stargate "+pod+" to advertise its dial address or refuse", waitConverge, func(ctx context.Context) error {
		ip, exited, err := e.stargateVariantIP(ctx, cs, pod)
		if err != nil || exited != nil {
			decided = exited
			return err
		}
		t := probe.GRPCTarget{Addr: net.JoinHostPort(ip, strconv.Itoa(manifests.GRPCPort)), TLS: probe.TLS{Plaintext: true}}
		r, err := e.Probe.WatchUntil(ctx, t, func(r *stargatepb.WatchStargatesResponse) bool { return len(r.GetStargates()) > 0 })
		if err != nil {
			return fmt.Errorf("Stargate %s neither refused nor answered WatchStargates: %w", pod, err)
		}
		advertised = advertised[:0]
		for _, sg := range r.GetStargates() {
			advertised = append(advertised, sg.GetGrpcPylonDialAddr())
		}
		fmt.Fprintf(&ev, "WatchStargates on %s: grpc_pylon_dial_addr=%q\n", t.Addr, advertised)
		return nil
	})
	defer func() { _ = e.noteEvidence("dial-addr.txt", ev.String()) }()
	if err != nil {
		return reason.Wrap(reason.Timeout, err)
	}
	if decided != nil {
		fmt.Fprintf(&ev, "refused: %v\n", decided)
		return decided
	}
	for _, a := range advertised {
		if !strings.HasPrefix(a, "https://") {
			return accepted(fmt.Errorf("the Stargate started without refusing and advertises grpc_pylon_dial_addr %q to every watcher", a))
		}
		if a != given {
			return fmt.Errorf("the Stargate advertises grpc_pylon_dial_addr %q, not the %q it was given", a, given)
		}
	}
	return nil
}
