package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/wire/reason"
)

// Steps that deploy a fresh Pylon variant beside the base one and read
// whether it registers or refuses (variants.go deploys and removes it).

// freshPylon deploys the Pylon variant called name, with faulty applied
// to its overrides under the scenario's own configuration (as the base
// Pylon with the control's), and reads its outcome.
func freshPylon(name string, faulty func(e *Env, o *deploy.PylonOverrides)) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		v := PylonVariant{Name: name}
		if s == Faulty {
			faulty(e, &v.Overrides)
		}
		return e.pylonVariantOutcome(ctx, v)
	}
}

// freshPylonAgainstIngressCert points the bootstrap region's ingress at the
// server certificate of purpose p (the good one with the control's
// configuration) and reads the outcome of a fresh Pylon called name.
func freshPylonAgainstIngressCert(name string, p pki.Purpose) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		purpose := pki.ServerGood
		if s == Faulty {
			purpose = p
		}
		return e.WithIngressCert(ctx, e.Bootstrap(), purpose, func(ctx context.Context) error {
			return e.pylonVariantOutcome(ctx, PylonVariant{Name: name})
		})
	}
}

// freshPylonUnderFault reads the outcome of a fresh Pylon called name with
// the fault that mk describes active under the scenario's own
// configuration (and none with the control's).
func freshPylonUnderFault(name string, mk func(e *Env) (faults.Fault, error)) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		if s != Faulty {
			return e.pylonVariantOutcome(ctx, PylonVariant{Name: name})
		}
		h, err := e.startMadeFault(ctx, mk)
		if err != nil {
			return err
		}
		err = e.pylonVariantOutcome(ctx, PylonVariant{Name: name})
		return withCleanup(err, "undo the fault", h.Stop(ctx))
	}
}

// pylonVariantOutcome deploys v, waits until it registers or refuses, and
// proves the outcome on the server side before removing v again: after a
// refusal, for three heartbeat periods, no Stargate replica of any region
// holds a registration or tunnel of v's inference server id (while v keeps
// running, so a late retry would show); after a registration, it is held
// by every ready replica of every region.
func (e *Env) pylonVariantOutcome(ctx context.Context, v PylonVariant) error {
	before, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	return e.WithPylon(ctx, v, func(ctx context.Context, dv *deploy.Variant) error {
		out := e.PylonOutcome(ctx, dv.Deployment, waitPylon)
		if out == nil {
			return e.heldExactlyOn(ctx, presence{id: dv.InferenceServerID, shared: echoModel, base: before})
		}
		if transient(reason.Of(out)) {
			return out // neither registered nor refused: nothing to prove
		}
		if err := e.heldNowhere(ctx, absence{id: dv.InferenceServerID, shared: echoModel, before: before}); err != nil {
			return fmt.Errorf("pylon %s refused (%v), but: %w", dv.Deployment, out, err)
		}
		return out
	})
}

// withMissingTrustBundle points the cell's trust source at a file that
// does not exist.
func withMissingTrustBundle(e *Env, o *deploy.PylonOverrides) {
	missing := manifests.TrustDir + "/does-not-exist.pem"
	o.Env = map[string]string{manifests.EnvTLSCertPath: missing}
	if e.Deployed.Cell.Trust == matrix.GRPCOverride {
		o.Env = map[string]string{manifests.EnvGRPCCAPath: missing}
	}
}

// withMalformedTrustBundle mounts a partially malformed bundle as the
// cell's trust source.
func withMalformedTrustBundle(e *Env, o *deploy.PylonOverrides) {
	if e.Deployed.Cell.Trust == matrix.GRPCOverride {
		o.CustomTrustConfigMap = pki.ConfigMapName(pki.BundleMalformed)
	} else {
		o.TrustConfigMap = pki.ConfigMapName(pki.BundleMalformed)
	}
}

// withSystemStoreLackingTheRoot mounts the unrelated CA's bundle where the
// merged bundle was, so SSL_CERT_FILE (the system store of trust
// system-plus-bundle) no longer holds the server chain's root; the custom
// bundle keeps its unrelated CA. Nothing else changes.
func withSystemStoreLackingTheRoot(_ *Env, o *deploy.PylonOverrides) {
	o.TrustConfigMap = pki.ConfigMapName(pki.BundleUnrelated)
}

// withSchemeLessBootstrap gives Pylon its bootstrap address as host:port,
// without a scheme.
func withSchemeLessBootstrap(e *Env, o *deploy.PylonOverrides) {
	o.BootstrapURL = strings.TrimPrefix(e.Deployed.BootstrapURL, "https://")
}

// withoutBootstrap gives Pylon an empty bootstrap address.
func withoutBootstrap(_ *Env, o *deploy.PylonOverrides) {
	o.EmptyBootstrap = true
}

// freshPylonDialingIngressByIP reads the outcome of a fresh Pylon called
// name whose bootstrap address, with the faulty setting, names the
// bootstrap region's ingress by its load balancer's IP instead of its
// hostname (same port, same certificate).
func freshPylonDialingIngressByIP(name string) Try {
	return func(ctx context.Context, e *Env, s Setting) error {
		v := PylonVariant{Name: name}
		if s == Faulty {
			lb, err := e.loadBalancer(e.Bootstrap(), manifests.GRPCService, manifests.GRPCPort)
			if err != nil {
				return fmt.Errorf("the bootstrap ingress's IP: %w", err)
			}
			v.Overrides.BootstrapURL = "https://" + lb.String()
		}
		return e.pylonVariantOutcome(ctx, v)
	}
}

// withHTTPBootstrap gives Pylon an explicit http:// bootstrap address.
func withHTTPBootstrap(e *Env, o *deploy.PylonOverrides) {
	o.BootstrapURL = strings.Replace(e.Deployed.BootstrapURL, "https://", "http://", 1)
}
