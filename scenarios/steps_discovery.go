package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/discovery"
	"github.com/nvcf/conformance/model/matrix"

	"github.com/nvcf/conformance/wire/reason"
)

// dashedIP matches an identity whose first label is a dashed IPv4 address.
var dashedIP = regexp.MustCompile(`^\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\.`)

// everyRegionAdvertisesLivePods requires every region's WatchStargates to
// advertise exactly its live pods' identities.
func everyRegionAdvertisesLivePods(ctx context.Context, e *Env, _ Setting) error {
	for _, r := range e.Regions() {
		if err := advertisesLivePods(ctx, e, r, ""); err != nil {
			return err
		}
	}
	return nil
}

// advertisesLivePods waits until region's WatchStargates advertises
// exactly the identities of its ready pods (never gone, when given) and no
// dashed-IP identity. Each attempt opens a fresh watch, so a change of the
// pods after an answer is seen too.
func advertisesLivePods(ctx context.Context, e *Env, region, gone string) error {
	return e.Eventually(ctx, "region "+region+" to advertise exactly its live pods", waitConverge, func(ctx context.Context) error {
		resp, err := e.Probe.Watch(ctx, e.Ingress(region))
		if err != nil {
			return err
		}
		got := advertisedHosts(resp)
		for _, h := range got {
			if dashedIP.MatchString(h) {
				return reason.Wrap(reason.InvalidAuthority, fmt.Errorf("region %s advertises the dashed-IP identity %q, which the router cannot route", region, h))
			}
		}
		pods, err := e.StargatePods(ctx, region)
		if err != nil {
			return err
		}
		var want []string
		for _, p := range pods {
			if p.Name != gone {
				want = append(want, e.Identity(region, p.Name))
			}
		}
		return expectSet("region "+region+" advertised identities", want, got)
	})
}

// noReplicaAdvertisesDeadOrDashed opens one fresh watch per Stargate pod
// (plus one) in every region, so the router's round robin reaches every
// replica, and requires each answer to name only live pods, never a
// dashed IP. Unlike advertisesLivePods it accepts a subset: DNS-SRV
// discovery, which drops the peers it cannot name, is held to it as well.
// A dashed-IP identity fails at once. A name of a pod that is gone must
// disappear within waitConverge: a peer found by DNS SRV stays advertised
// until the replica's next lookup, and a cell switch has just removed the
// previous cell's pods.
func noReplicaAdvertisesDeadOrDashed(ctx context.Context, e *Env, _ Setting) error {
	var dashed error
	err := e.Eventually(ctx, "every replica to advertise live pods only", waitConverge, func(ctx context.Context) error {
		dead, err := advertisedDeadOrDashed(ctx, e)
		if errors.Is(err, errDashedIdentity) {
			dashed = err // no wait can excuse it: end the wait with it
			return nil
		}
		if err != nil {
			return err
		}
		return dead
	})
	if dashed != nil {
		return dashed
	}
	return err
}

// errDashedIdentity marks an advertised dashed-IP identity.
var errDashedIdentity = errors.New("dashed-IP identity")

// advertisedDeadOrDashed is one look of noReplicaAdvertisesDeadOrDashed:
// dead names a live-pod violation; err a dashed identity
// (errDashedIdentity) or a failure to look.
func advertisedDeadOrDashed(ctx context.Context, e *Env) (dead, err error) {
	for _, r := range e.Regions() {
		pods, err := e.StargatePods(ctx, r)
		if err != nil {
			return nil, err
		}
		live := map[string]bool{}
		for _, p := range pods {
			live[e.Identity(r, p.Name)] = true
		}
		for range len(pods) + 1 {
			resp, err := e.Probe.Watch(ctx, e.Ingress(r))
			if err != nil {
				return nil, err
			}
			for _, h := range advertisedHosts(resp) {
				if dashedIP.MatchString(h) {
					return nil, reason.Wrap(reason.InvalidAuthority, fmt.Errorf("region %s advertises the %w %q, which the router cannot route", r, errDashedIdentity, h))
				}
				if !live[h] && dead == nil {
					dead = reason.Wrap(reason.InvalidAuthority, fmt.Errorf("region %s advertises %q, which names no live pod", r, h))
				}
			}
		}
	}
	return dead, nil
}

// podReplacement deletes the first Stargate pod of the bootstrap region
// and follows discovery and Pylon to its replacement, until every replica
// holds the base Pylon's registration and reverse tunnel again.
func podReplacement(ctx context.Context, e *Env, _ Setting) error {
	region := e.Bootstrap()
	victim, err := firstPod(ctx, e, region)
	if err != nil {
		return err
	}
	before, err := e.StargatePods(ctx, region)
	if err != nil {
		return err
	}
	if err := e.deployer.DeletePod(ctx, region, victim.Name); err != nil {
		return stepFailed(fmt.Sprintf("delete Stargate pod %s/%s", region, victim.Name), err)
	}
	e.NoteFault("deleted Stargate pod " + region + "/" + victim.Name)
	if err := e.deployer.WaitStargates(ctx, region); err != nil {
		return err
	}
	after, err := e.StargatePods(ctx, region)
	if err != nil {
		return err
	}
	gone := ""
	if !slices.ContainsFunc(after, func(p Pod) bool { return p.Name == victim.Name }) {
		gone = victim.Name // a Deployment's replacement has a new name
	}
	if err := advertisesLivePods(ctx, e, region, gone); err != nil {
		return err
	}
	fresh := replacement(before, after, victim)
	err = e.Eventually(ctx, "Pylon registered with the replacement "+fresh, waitConverge, func(ctx context.Context) error {
		doc, err := e.PylonStatus(ctx, "pylon")
		if err != nil {
			return err
		}
		id := e.Identity(region, fresh)
		for _, entry := range doc.Entries(id) {
			if Healthy(entry) {
				if gone != "" && doc.Mentions(e.Identity(region, gone)) && stillHealthy(doc, e.Identity(region, gone)) {
					return fmt.Errorf("pylon still holds a healthy registration with the deleted %s", gone)
				}
				return nil
			}
		}
		return fmt.Errorf("pylon holds no healthy registration with %s: %s", id, doc)
	})
	if err != nil {
		return err
	}
	// Pylon's registration comes before its reverse tunnel, and a ready
	// Stargate without the tunnel answers a bare 503 (the model is
	// registered, no server of it routable): the
	// replacement has settled once every replica, asked on the server side,
	// holds both again.
	return e.checkBaseline(ctx, waitConverge, false)
}

// replacement names the pod that replaced victim: the new name (Deployment)
// or the same name (StatefulSet).
func replacement(before, after []Pod, victim Pod) string {
	for _, p := range after {
		if !slices.ContainsFunc(before, func(b Pod) bool { return b.Name == p.Name }) {
			return p.Name
		}
	}
	return victim.Name
}

func stillHealthy(doc Doc, id string) bool {
	return slices.ContainsFunc(doc.Entries(id), Healthy)
}

// srvTargetsResolvedToPodNames proves, region by region, that the cell
// exercises the epic's defect 4 and that Stargate handles it: the
// cluster's own CoreDNS answers the headless Service's SRV query with
// dashed-IP targets for a Deployment's pods (pod hostnames for a
// StatefulSet's), every Stargate says it discovers by DNS, and the region
// still advertises exactly its live pods' names.
func srvTargetsResolvedToPodNames(ctx context.Context, e *Env, _ Setting) error {
	for _, r := range e.Regions() {
		if err := srvAnswersByWorkloadKind(ctx, e, r); err != nil {
			return err
		}
		if err := stargatesDiscoverByDNS(ctx, e, r); err != nil {
			return err
		}
		if err := advertisesLivePods(ctx, e, r, ""); err != nil {
			return err
		}
	}
	return nil
}

// srvAnswersByWorkloadKind waits until the region's CoreDNS answers
// _grpc._tcp.<headless service> with one target per ready Stargate pod:
// its dashed IP behind a Deployment, its name behind a StatefulSet. The
// answers go to the evidence folder.
func srvAnswersByWorkloadKind(ctx context.Context, e *Env, region string) error {
	info, ok := e.Config.Environment.Cluster(region)
	if !ok || !info.Network.DNS.IsValid() {
		// Clusters reached by kubeconfig only (the existing provider):
		// their CoreDNS is not reachable from here, so the case is
		// skipped with the reason, not failed.
		return fmt.Errorf("%w: cluster %s: the SRV answer is asked of the cluster's CoreDNS from this host, and the provider gave no address for it", faults.ErrNoSeam, region)
	}
	kind := e.stargateKind(region)
	name := discovery.SRVName(manifests.HeadlessService, e.Deployed.Namespace, clusterDomain)
	return e.Eventually(ctx, "CoreDNS of "+region+" to answer "+name+" for every ready "+string(kind)+" pod", waitConverge, func(ctx context.Context) error {
		targets, err := discovery.LookupSRV(ctx, info.Network.DNS.String(), name)
		if err != nil {
			return err
		}
		pods, err := e.StargatePods(ctx, region)
		if err != nil {
			return err
		}
		if err := e.noteEvidence("srv-"+region+".txt", fmt.Sprintf("SRV %s at %s (%s)\n%s\n", name, info.Network.DNS, kind, strings.Join(targets, "\n"))); err != nil {
			return err
		}
		var got, want []string
		for _, t := range targets {
			got = append(got, strings.SplitN(t, ".", 2)[0])
		}
		for _, p := range pods {
			if kind == matrix.KindDeployment {
				want = append(want, strings.ReplaceAll(p.IP, ".", "-"))
			} else {
				want = append(want, p.Name)
			}
		}
		return expectSet("region "+region+" SRV target labels", want, got)
	})
}

// stargatesDiscoverByDNS requires every ready Stargate of region whose
// /status names its discovery mode to name DNS, so a Stargate that fell
// back to EndpointSlices cannot pass the DNS cells. A real Stargate serves
// no /status and reports no mode; its mode follows from its arguments
// (stargatesConfiguredForSRV).
func stargatesDiscoverByDNS(ctx context.Context, e *Env, region string) error {
	if byMetrics(e.Config) {
		return stargatesConfiguredForSRV(ctx, e, region)
	}
	pods, err := e.StargatePods(ctx, region)
	if err != nil {
		return err
	}
	for _, p := range pods {
		doc, err := e.StargateStatus(ctx, p)
		if err != nil {
			return err
		}
		if m, ok := doc.v.(map[string]any); ok {
			if mode, ok := m["discovery"].(string); ok && mode != string(matrix.DNS) {
				return fmt.Errorf("Stargate %s/%s discovers by %q, not by DNS, in a DNS discovery cell", region, p.Name, mode)
			}
		}
	}
	return nil
}

// stargatesConfiguredForSRV requires every ready Stargate pod of region to
// run with the arguments under which NVCF's Stargate discovers its peers by
// the headless Service's SRV records and names each by the record's target
// label: --stargate-discovery-dns-name with a name, --pod-name and
// --pod-namespace, and no --disable-dns-discovery (without the pod flags it
// looks up addresses instead; with the disable flag it knows only itself;
// it has no EndpointSlice discovery to fall back to:
// crates/stargate/src/main/startup.rs). Read from the pods' specs through
// the Kubernetes API, since a real Stargate reports no mode; recorded as
// proof level none, with the arguments in discovery-<region>.txt.
func stargatesConfiguredForSRV(ctx context.Context, e *Env, region string) error {
	cs, err := e.Kube(region)
	if err != nil {
		return err
	}
	pods, err := e.StargatePods(ctx, region)
	if err != nil {
		return err
	}
	var ev strings.Builder
	for _, p := range pods {
		kp, err := cs.CoreV1().Pods(e.Deployed.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var args []string
		for _, c := range kp.Spec.Containers {
			if c.Name == manifests.StargateName {
				args = c.Args
			}
		}
		var dnsName string
		pod, ns, disabled := false, false, false
		for _, a := range args {
			switch {
			case strings.HasPrefix(a, "--stargate-discovery-dns-name="):
				dnsName = strings.TrimPrefix(a, "--stargate-discovery-dns-name=")
			case strings.HasPrefix(a, "--pod-name="):
				pod = true
			case strings.HasPrefix(a, "--pod-namespace="):
				ns = true
			case a == "--disable-dns-discovery" || strings.HasPrefix(a, "--disable-dns-discovery="):
				disabled = true
			}
		}
		fmt.Fprintf(&ev, "%s: --stargate-discovery-dns-name=%q --pod-name set=%t --pod-namespace set=%t --disable-dns-discovery=%t\n", p.Name, dnsName, pod, ns, disabled)
		if dnsName == "" || !pod || !ns || disabled {
			_ = e.noteEvidence("discovery-"+region+".txt", ev.String())
			return fmt.Errorf("Stargate %s/%s does not run SRV discovery by its arguments (%v), in a DNS discovery cell", region, p.Name, args)
		}
	}
	if err := e.noteEvidence("discovery-"+region+".txt", ev.String()); err != nil {
		return err
	}
	e.noteProof("the Stargates of "+region+" discover by DNS SRV: read from their pods' arguments, since a real Stargate reports no discovery mode", ProofNone)
	return nil
}

// clusterDomain is the clusters' DNS domain (every provider's default, and
// the reference Stargate's).
const clusterDomain = "cluster.local"

// stargateKind is the workload kind the cell deployed region's Stargates as.
func (e *Env) stargateKind(region string) matrix.Kind {
	for _, c := range e.Deployed.Clusters {
		if c.Name == region {
			return c.StargateKind
		}
	}
	return ""
}

// noteEvidence writes one file into the case's evidence folder.
func (e *Env) noteEvidence(name, content string) error {
	if err := os.MkdirAll(e.Evidence, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.Evidence, name), []byte(content), 0o644)
}
