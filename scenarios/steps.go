package scenarios

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nvcf/conformance/scenarios/probe"
	"github.com/nvcf/conformance/wire/reason"
	stargatepb "github.com/nvcf/conformance/wire/stargatepb"
)

// Waits of the catalogue, before the run's time scale.
const (
	waitPylon    = 90 * time.Second // a Pylon rolls out, bootstraps and registers
	waitConverge = 60 * time.Second // discovery and registrations follow a change
	waitStatus   = 20 * time.Second // a registration shows in /status
)

// inOrder runs steps one after the other with the same setting and stops
// at the first error.
func inOrder(steps ...Try) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		for _, step := range steps {
			if err := step(ctx, e, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// before runs step as the precondition of what, naming it in an error.
func before(what string, step Try) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		if err := step(ctx, e, s); err != nil {
			return fmt.Errorf("before %s: %w", what, err)
		}
		return nil
	}
}

// uniqueID names a rogue inference server so that its registration can be
// found in every /status without doubt.
func uniqueID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// rogueRegistration is what the harness's rogue Pylon registers as id:
// its own model (probeModel) and a reverse tunnel, which makes it valid
// for a real Stargate too (probe.RogueRegistration). Whether a tunnel is
// then dialled is the case's business.
func rogueRegistration(id string) *stargatepb.InferenceServerRegistration {
	return probe.RogueRegistration(id, probeModel(id))
}

// firstPod returns the first ready Stargate pod of region.
func firstPod(ctx context.Context, e *Env, region string) (Pod, error) {
	pods, err := e.StargatePods(ctx, region)
	if err != nil {
		return Pod{}, err
	}
	if len(pods) == 0 {
		return Pod{}, fmt.Errorf("region %s has no ready Stargate pod", region)
	}
	return pods[0], nil
}

// ingressNaming is region's ingress with :authority naming the Stargate
// pod's identity.
func (e *Env) ingressNaming(region, pod string) probe.GRPCTarget {
	t := e.Ingress(region)
	t.Authority = e.Identity(region, pod)
	return t
}

// advertisedHosts returns the hosts (no scheme, no port) of the
// advertise_addr of every Stargate in a WatchStargates response.
func advertisedHosts(r *stargatepb.WatchStargatesResponse) []string {
	var out []string
	for _, s := range r.GetStargates() {
		out = append(out, hostOf(s.GetAdvertiseAddr()))
	}
	slices.Sort(out)
	return out
}

// hostOf strips a scheme and a port from an address.
func hostOf(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		addr = addr[i+3:]
	}
	addr = strings.TrimSuffix(addr, "/")
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && !strings.Contains(addr[i:], "]") {
		addr = addr[:i]
	}
	return addr
}

// expectSet compares two sorted sets of names.
func expectSet(what string, want, got []string) error {
	want, got = slices.Clone(want), slices.Clone(got)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("%s: want %v, got %v", what, want, got)
	}
	return nil
}

// refusedWith is an error carrying reason r, for steps that find a
// refusal by reading rather than by making a call.
func refusedWith(r reason.Reason, format string, args ...any) error {
	return reason.Wrap(r, fmt.Errorf(format, args...))
}
