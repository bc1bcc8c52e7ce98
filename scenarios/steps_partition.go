package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/fixtures/deploy/manifests"
)

// partitionRemote partitions the workers from the remote region the
// bootstrap region watches, requires Pylon's registrations there (and
// only there) to drop while it lasts, heals it once they have, and
// requires them to return.
func partitionRemote(ctx context.Context, e *Env, _ Setting) (err error) {
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
	undone := false // faultOver reports the undo's error itself
	defer func() {
		if !undone {
			err = withCleanup(err, "undo the partition", h.Stop(ctx))
		}
	}()
	if err := registrationDrops(ctx, e, h, remote, id, len(before)); err != nil {
		return err
	}
	onBoot, err := e.RegisteredOn(ctx, boot, id)
	if err != nil {
		return err
	}
	if len(onBoot) == 0 {
		return fmt.Errorf("the partition of %s also dropped the registration with %s", remote, boot)
	}
	// Heal as soon as the drop shows: holding the partition longer proves
	// nothing more, and Pylon's reconnect back-off would only grow.
	undone = true
	if err := h.Stop(ctx); err != nil {
		return stepFailed("heal the partition", err)
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

// registrationDrops watches, while the partition h lasts, for the remote
// region to lose Pylon's registration id (its Stargates list it on fewer
// than before replicas, or Pylon stops reporting it healthy there).
func registrationDrops(ctx context.Context, e *Env, h *faults.Handle, remote, id string, before int) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-h.Done():
			return fmt.Errorf("the registration with %s never dropped while the partition lasted", remote)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		on, err := e.RegisteredOn(ctx, remote, id)
		if err != nil {
			continue
		}
		doc, derr := e.PylonStatus(ctx, manifests.PylonName)
		if len(on) < before || (derr == nil && slices.ContainsFunc(doc.Entries(e.Identity(remote, "")), func(m map[string]any) bool { return !Healthy(m) })) {
			return nil
		}
	}
}

// partitionLength is how long the partition may last for the drop to
// show (it is healed as soon as it does): 20 s, or longer when
// the remote Stargates' registration heartbeat (which a rogue registration
// reads from the x-stargate-registration-heartbeat-ms header) lets a silent
// registration live longer, so that a drop is possible at all: three missed
// heartbeats and 5 s more. With a 2 s heartbeat, 11 s proved
// too short for the drop to show (it did show within 20 s).
func partitionLength(ctx context.Context, e *Env, remote string) (time.Duration, error) {
	p, err := firstPod(ctx, e, remote)
	if err != nil {
		return 0, err
	}
	reg, err := e.Probe.Register(ctx, e.ingressNaming(remote, p.Name), rogueRegistration(uniqueID("heartbeat")))
	if err != nil {
		return 0, stepFailed("read the heartbeat interval of "+remote, err)
	}
	reg.Close()
	return max(20*time.Second, 3*reg.Heartbeat+5*time.Second), nil
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
