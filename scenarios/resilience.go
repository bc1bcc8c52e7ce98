package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/deploy/manifests"
)

// resilienceScenarios run while the system is disturbed: pods die,
// networks between clusters misbehave (package faults). Every fault a case
// injects is recorded and named in its report.
func resilienceScenarios() []Scenario {
	return []Scenario{
		{
			ID: "resilience/stargate-pod-killed", Layer: LayerResilience, Labels: []string{LabelPylon, LabelProbe, LabelFaults},
			Summary: "a Stargate pod is killed: no stale identity stays advertised, Pylon re-registers with the replacement within a bounded time, and invocations keep succeeding",
			Expect:  Pass,
			Try: func(ctx context.Context, e *Env, s Setting) error {
				if err := podReplacement(ctx, e, s); err != nil {
					return err
				}
				if err := invokeEventually(ctx, e, e.Bootstrap(), echoModel); err != nil {
					return err
				}
				// Once the dead pod left the EndpointSlice, no invocation may reach it.
				for i := range 5 {
					if _, err := e.Probe.ChatCompletion(ctx, e.Invoke(e.Bootstrap()), echoModel, fmt.Sprintf("after the kill %d", i)); err != nil {
						return fmt.Errorf("invocation %d after the replacement settled: %w", i+1, err)
					}
				}
				return nil
			},
		},
		{
			ID: "resilience/partition-workers-remote", Layer: LayerResilience, Labels: []string{LabelPylon, LabelFaults, LabelCrossRegion},
			Summary:  "a partition between the workers and the remote region (10 s, or three missed heartbeats and 5 s if longer) drops Pylon's registrations there, leaves the bootstrap region's untouched, and they return after healing",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   Pass, Try: partitionRemote,
		},
		{
			ID: "resilience/quic-loss-delay", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
			Summary:  "under 20 % loss and 100 ms ± 20 ms delay on the tunnel's UDP path, invocations still succeed, and afterwards every Stargate replica's tunnel serves",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   Pass, Try: quicLossDelay,
		},
		{
			ID: "resilience/quic-blackhole-reconnect", Layer: LayerResilience, Labels: []string{LabelProbe, LabelFaults},
			Summary:  "after a 5 s blackhole on the tunnel's UDP path the tunnel to every Stargate replica comes back and serves invocations within a bounded time",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   Pass, Try: quicBlackhole,
		},
	}
}

// startFault injects f through the World's recorder and notes it on the case.
func (e *Env) startFault(ctx context.Context, f faults.Fault) (*faults.Handle, error) {
	h, err := faults.Start(ctx, f, e.recorder)
	if err != nil {
		return nil, err
	}
	span := "until the case's steps end"
	if f.Duration > 0 {
		span = "for " + f.Duration.String()
	}
	e.NoteFault(fmt.Sprintf("%s %s: %s (%s, from %s)", f.Kind(), f.Target, f.Action.Describe(), span, time.Now().UTC().Format(time.RFC3339)))
	return h, nil
}

func partitionRemote(ctx context.Context, e *Env, _ Setting) error {
	remote, err := remoteWatched(e)
	if err != nil {
		return err
	}
	boot := e.Bootstrap()
	if err := e.pylonHealthyWith(ctx, []string{boot, remote}, waitConverge); err != nil {
		return fmt.Errorf("before the partition: %w", err)
	}
	id, err := e.pylonServerID(ctx)
	if err != nil {
		return err
	}
	before, err := e.RegisteredOn(ctx, remote, id)
	if err != nil {
		return err
	}
	d, err := partitionLength(ctx, e, remote)
	if err != nil {
		return err
	}
	h, err := e.startFault(ctx, faults.Fault{
		Name:     "partition " + e.Workers() + "<->" + remote,
		Target:   faults.Target{From: e.Workers(), To: remote},
		Action:   faults.PartitionBetween(e.cluster(e.Workers()), e.cluster(remote), false),
		Duration: d,
	})
	if err != nil {
		return err
	}
	defer h.Stop(ctx)
	// While the partition lasts, the remote region must lose the
	// registration (its Stargates stop listing Pylon's inference server, or
	// Pylon stops reporting it healthy) and the bootstrap region must not.
	var dropped error = fmt.Errorf("the registration with %s never dropped while the partition lasted", remote)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
watch:
	for {
		select {
		case <-h.Done():
			break watch
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		on, err := e.RegisteredOn(ctx, remote, id)
		if err != nil {
			continue
		}
		doc, derr := e.PylonStatus(ctx, manifests.PylonName)
		if len(on) < len(before) || (derr == nil && slices.ContainsFunc(doc.Entries(e.Identity(remote, "")), func(m map[string]any) bool { return !Healthy(m) })) {
			dropped = nil
			break
		}
	}
	if dropped != nil {
		return dropped
	}
	onBoot, err := e.RegisteredOn(ctx, boot, id)
	if err != nil {
		return err
	}
	if len(onBoot) == 0 {
		return fmt.Errorf("the partition of %s also dropped the registration with %s", remote, boot)
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := h.Err(); err != nil {
		return err
	}
	if err := e.Eventually(ctx, "the registration to return to "+remote+" after healing", waitConverge, func(ctx context.Context) error {
		on, err := e.RegisteredOn(ctx, remote, id)
		if err != nil {
			return err
		}
		if len(on) < len(before) {
			return fmt.Errorf("%s lists %s on %v, before the partition on %v", remote, id, on, before)
		}
		return nil
	}); err != nil {
		return err
	}
	return e.pylonHealthyWith(ctx, []string{boot, remote}, waitConverge)
}

// partitionLength is how long the partition lasts: 10 s, or longer when
// the remote Stargates' registration heartbeat (which a rogue registration
// reads from the x-stargate-registration-heartbeat-ms header) lets a silent
// registration live longer, so that a drop is possible at all: three missed
// heartbeats and 5 s more.
func partitionLength(ctx context.Context, e *Env, remote string) (time.Duration, error) {
	p, err := firstPod(ctx, e, remote)
	if err != nil {
		return 0, err
	}
	t := e.Ingress(remote)
	t.Authority = e.Identity(remote, p.Name)
	reg, err := e.Probe.Register(ctx, t, rogueRegistration(uniqueID("heartbeat"), false))
	if err != nil {
		return 0, fmt.Errorf("read the heartbeat interval of %s: %w", remote, err)
	}
	reg.Close()
	return max(10*time.Second, 3*reg.Heartbeat+5*time.Second), nil
}

// pylonServerID is the inference server id the base Pylon registers.
func (e *Env) pylonServerID(ctx context.Context) (string, error) {
	doc, err := e.PylonStatus(ctx, manifests.PylonName)
	if err != nil {
		return "", err
	}
	m, _ := doc.v.(map[string]any)
	if id, _ := m["inference_server_id"].(string); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("pylon's /status names no inference_server_id: %s", doc)
}

// pylonHealthyWith waits until Pylon holds a healthy registration with
// some Stargate of each region.
func (e *Env) pylonHealthyWith(ctx context.Context, regions []string, d time.Duration) error {
	return e.Eventually(ctx, fmt.Sprintf("Pylon registered in %v", regions), d, func(ctx context.Context) error {
		doc, err := e.PylonStatus(ctx, manifests.PylonName)
		if err != nil {
			return err
		}
		for _, r := range regions {
			if !stillHealthy(doc, e.Identity(r, "")) {
				return fmt.Errorf("pylon holds no healthy registration in %s: %s", r, doc)
			}
		}
		return nil
	})
}

// quicPath is the UDP path from the workers' pods to the bootstrap
// region's QUIC relay load balancer.
func (e *Env) quicPath() (faults.Path, error) {
	lb, err := e.loadBalancer(e.Bootstrap(), manifests.QUICService, manifests.QUICPort)
	if err != nil {
		return faults.Path{}, err
	}
	return faults.PathBetween(e.cluster(e.Workers()), lb), nil
}

// cluster is the named cluster as the provider described it (with its
// address plan, which the network faults aim at).
func (e *Env) cluster(name string) clusters.ClusterInfo {
	c, _ := e.Config.Environment.Cluster(name)
	return c
}

func quicLossDelay(ctx context.Context, e *Env, _ Setting) error {
	if err := invokeEventually(ctx, e, e.Bootstrap(), echoModel); err != nil {
		return fmt.Errorf("before the fault: %w", err)
	}
	path, err := e.quicPath()
	if err != nil {
		return err
	}
	imp := faults.Impairment{Loss: 0.2, Delay: 100 * time.Millisecond, Jitter: 20 * time.Millisecond}
	h, err := e.startFault(ctx, faults.Fault{
		Name: "quic loss and delay", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.QUICService},
		Action: faults.UDPFault{Path: path, Upstream: imp, Downstream: imp, Seed: 7}, Duration: 2 * time.Minute,
	})
	if err != nil {
		return err
	}
	defer h.Stop(ctx)
	for i := range 5 {
		if _, err := e.Probe.ChatCompletion(ctx, e.Invoke(e.Bootstrap()), echoModel, fmt.Sprintf("under loss %d", i)); err != nil {
			return fmt.Errorf("invocation %d under 20%% loss: %w", i+1, err)
		}
	}
	if err := h.Stop(ctx); err != nil {
		return err
	}
	return invokeEveryStargate(ctx, e, e.Bootstrap(), echoModel)
}

func quicBlackhole(ctx context.Context, e *Env, _ Setting) error {
	if err := invokeEventually(ctx, e, e.Bootstrap(), echoModel); err != nil {
		return fmt.Errorf("before the fault: %w", err)
	}
	path, err := e.quicPath()
	if err != nil {
		return err
	}
	hole := faults.Impairment{Loss: 1}
	h, err := e.startFault(ctx, faults.Fault{
		Name: "quic blackhole", Target: faults.Target{From: e.Workers(), To: e.Bootstrap(), Service: manifests.QUICService},
		Action: faults.UDPFault{Path: path, Upstream: hole, Downstream: hole}, Duration: 5 * time.Second,
	})
	if err != nil {
		return err
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := h.Err(); err != nil {
		return err
	}
	return invokeEveryStargate(ctx, e, e.Bootstrap(), echoModel)
}
