package scenarios

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/model/campaign"
	"github.com/nvcf/conformance/model/matrix"
)

// campaignFault is one scheduled fault made concrete: either an injector
// fault (Fault), or an operation of the campaign's own (on, off) for what
// the injector has no action for (a rollout, a Pylon leaving).
type campaignFault struct {
	Fault   *faults.Fault
	on, off func(ctx context.Context) error
	// leaving names the campaign Pylon a pylon-leave fault removes.
	leaving string
}

// makeFault builds the scheduled fault f on the campaign's cell.
func (c *campaignRun) makeFault(ctx context.Context, f campaign.Fault) (campaignFault, error) {
	e := c.e
	from, to, _ := strings.Cut(f.Target, "->")
	name := fmt.Sprintf("campaign #%d %s", f.ID, f.Kind)
	dur := f.Duration.D()
	param := func(k string, def time.Duration) time.Duration {
		if v, ok := f.Params[k]; ok {
			if d, err := time.ParseDuration(v); err == nil {
				return d
			}
		}
		return def
	}
	ratio := func(k string, def float64) float64 {
		if v, ok := f.Params[k]; ok {
			if x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64); err == nil {
				if strings.HasSuffix(v, "%") {
					x /= 100
				}
				return x
			}
		}
		return def
	}
	path := func(service string, port int) (faults.Path, netip.AddrPort, error) {
		lb, err := e.loadBalancer(to, service, port)
		if err != nil {
			return faults.Path{}, lb, err
		}
		return faults.PathBetween(e.cluster(from), lb), lb, nil
	}
	injector := func(a faults.Action, t faults.Target) (campaignFault, error) {
		return campaignFault{Fault: &faults.Fault{Name: name, Target: t, Action: a, Duration: dur}}, nil
	}
	// crash kills one pod's processes of the selector in the target cluster.
	crash := func(selector string) (campaignFault, error) {
		ff, err := faults.FromParams(ctx, "pod-crash", f.Target+"/"+e.Deployed.Namespace,
			map[string]string{"name": name, "selector": selector, "count": "1"}, faults.ParamEnv{Environment: e.Config.Environment})
		if err != nil {
			return campaignFault{}, err
		}
		ff.Duration = dur
		return campaignFault{Fault: &ff}, nil
	}
	switch f.Kind {
	case campaign.Partition:
		return injector(faults.PartitionBetween(e.cluster(from), e.cluster(to), false), faults.Target{From: from, To: to})
	case campaign.QUICLoss, campaign.QUICDelay, campaign.QUICBlackhole:
		p, _, err := path(manifests.QUICService, manifests.QUICPort)
		if err != nil {
			return campaignFault{}, err
		}
		var imp faults.Impairment
		switch f.Kind {
		case campaign.QUICLoss:
			imp = faults.Impairment{Loss: ratio("loss", 0.2), Delay: param("delay", 100*time.Millisecond)}
		case campaign.QUICDelay:
			imp = faults.Impairment{Delay: param("delay", 200*time.Millisecond), Jitter: param("jitter", 40*time.Millisecond)}
		default:
			imp = faults.Impairment{Loss: 1}
		}
		return injector(faults.UDPFault{Path: p, Upstream: imp, Downstream: imp, Seed: uint64(c.s.Seed) + uint64(f.ID)},
			faults.Target{From: from, To: to, Service: manifests.QUICService})
	case campaign.TCP:
		_, lb, err := path(manifests.GRPCService, manifests.GRPCPort)
		if err != nil {
			return campaignFault{}, err
		}
		kv := map[string]string{"name": name, "latency": param("latency", 300*time.Millisecond).String()}
		ff, err := faults.FromParams(ctx, "tcp", from+"->"+lb.String(), kv, faults.ParamEnv{Environment: e.Config.Environment})
		if err != nil {
			return campaignFault{}, err
		}
		ff.Duration = dur
		return campaignFault{Fault: &ff}, nil
	case campaign.Downgrade:
		_, lb, err := path(manifests.GRPCService, manifests.GRPCPort)
		if err != nil {
			return campaignFault{}, err
		}
		return injector(faults.Downgrade{Path: faults.PathBetween(e.cluster(from), lb), Mode: faults.DowngradeH2C},
			faults.Target{From: from, To: to, Service: manifests.GRPCService})
	case campaign.DNSSpoof:
		// The region's gRPC name answers with another region's ingress
		// address: a Pylon that checks the name refuses it.
		other := ""
		for _, r := range e.Regions() {
			if r != to {
				other = r
				break
			}
		}
		if other == "" {
			return campaignFault{}, fmt.Errorf("dns-spoof needs a second region to point %s's name at", to)
		}
		lb, err := e.loadBalancer(other, manifests.GRPCService, manifests.GRPCPort)
		if err != nil {
			return campaignFault{}, err
		}
		host := e.Topology.GRPCHost(to)
		return injector(faults.DNSFault{Name: host, Mode: faults.Spoof, Addr: lb.Addr(),
			Intercepts: []faults.DNSIntercept{faults.ClusterDNSIntercept(e.cluster(from))}},
			faults.Target{Cluster: from, Service: host})
	case campaign.StargateKill:
		return crash(deploy.StargateSelector().String())
	case campaign.PylonKill:
		return crash(manifests.InstanceLabel + "=" + manifests.PylonName + "-" + c.pick(f.ID))
	case campaign.ScaleDown:
		cr, ok := e.Deployed.Cluster(f.Target)
		if !ok {
			return campaignFault{}, fmt.Errorf("no deployment in %s", f.Target)
		}
		kind := "deployment"
		if cr.StargateKind == matrix.KindStatefulSet {
			kind = "statefulset"
		}
		ff, err := faults.FromParams(ctx, "scale", f.Target+"/"+e.Deployed.Namespace+"/"+kind+"/"+cr.StargateWorkload,
			map[string]string{"name": name, "replicas": "1"}, faults.ParamEnv{Environment: e.Config.Environment})
		if err != nil {
			return campaignFault{}, err
		}
		ff.Duration = dur
		return campaignFault{Fault: &ff}, nil
	case campaign.CertRotate:
		before, err := e.Probe.PeerCertificate(ctx, e.Ingress(f.Target))
		if err != nil {
			return campaignFault{}, fmt.Errorf("read the certificate the ingress of %s serves: %w", f.Target, err)
		}
		rot := faults.CertRotate{
			Cluster:   faults.Cluster{Kubeconfig: e.Config.Environment.Kubeconfig, Context: f.Target},
			Namespace: e.Deployed.Namespace, Secret: manifests.IngressTLSSecret, Variant: "good (re-issued)",
		}
		if rot.Cert, rot.Key, err = reissue(e.PKI, before); err != nil {
			return campaignFault{}, err
		}
		return injector(rot, faults.Target{Cluster: f.Target, Service: e.Deployed.Namespace + "/" + manifests.IngressTLSSecret})
	case campaign.Rollout:
		region := f.Target
		return campaignFault{on: func(ctx context.Context) error { return e.restartStargates(ctx, region) }}, nil
	case campaign.PylonLeave:
		p := c.pick(f.ID + 1)
		return campaignFault{leaving: p,
			on:  func(ctx context.Context) error { return e.deployer.DeletePylonVariant(ctx, p) },
			off: func(ctx context.Context) error { _, err := c.applyPylon(ctx, p, false); return err },
		}, nil
	}
	return campaignFault{}, fmt.Errorf("fault #%d: kind %q has no maker", f.ID, f.Kind)
}

// restartStargates rolls a region's Stargates as `kubectl rollout restart`
// does: a new template annotation, so the workload replaces every pod
// under its update strategy.
func (e *Env) restartStargates(ctx context.Context, region string) error {
	cr, ok := e.Deployed.Cluster(region)
	if !ok {
		return fmt.Errorf("no deployment in %s", region)
	}
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"conformance.nvcf/restarted-at":%q}}}}}`, time.Now().Format(time.RFC3339Nano)))
	ns := e.Deployed.Namespace
	if cr.StargateKind == matrix.KindStatefulSet {
		_, err = cs.AppsV1().StatefulSets(ns).Patch(ctx, cr.StargateWorkload, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = cs.AppsV1().Deployments(ns).Patch(ctx, cr.StargateWorkload, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("restart the Stargates of %s: %w", region, err)
	}
	return nil
}

// stargatesRolledOut reports whether a region's Stargate workload has
// finished its rollout (every replica updated and ready).
func (e *Env) stargatesRolledOut(ctx context.Context, region string) (bool, error) {
	cr, ok := e.Deployed.Cluster(region)
	if !ok {
		return false, fmt.Errorf("no deployment in %s", region)
	}
	cs, err := e.Kube(region)
	if err != nil {
		return false, err
	}
	ns := e.Deployed.Namespace
	if cr.StargateKind == matrix.KindStatefulSet {
		ss, err := cs.AppsV1().StatefulSets(ns).Get(ctx, cr.StargateWorkload, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := int32(1)
		if ss.Spec.Replicas != nil {
			want = *ss.Spec.Replicas
		}
		return ss.Status.ObservedGeneration >= ss.Generation && ss.Status.UpdatedReplicas == want && ss.Status.ReadyReplicas == want && ss.Status.CurrentRevision == ss.Status.UpdateRevision, nil
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, cr.StargateWorkload, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	return deploymentDone(d), nil
}

func deploymentDone(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want && s.Replicas == want
}
