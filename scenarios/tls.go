package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/nvcf/conformance/fixtures/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/wire/reason"
	"github.com/nvcf/conformance/harness/model/matrix"
	"github.com/nvcf/conformance/pki"
)

// tlsScenarios: gRPC TLS on 50071, from the harness's probe (what the
// ingress serves and refuses) and from Pylon (what a client must refuse).
func tlsScenarios() []Scenario {
	bundleTrusts := []matrix.Trust{matrix.Bundle, matrix.GRPCOverride}
	return []Scenario{
		{
			ID: "tls/verified-watch", Layer: LayerTLS, Labels: []string{LabelProbe},
			Summary: "the probe watches every region through its ingress over TLS verified against the environment's root",
			Expect:  Pass, Try: verifiedWatch,
		},
		{
			ID: "tls/wrong-root", Layer: LayerTLS, Labels: []string{LabelProbe},
			Summary: "a client trusting only another root refuses the ingress",
			Expect:  FailClosed(reason.UnknownAuthority), Control: "tls/verified-watch",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				t := e.Ingress(e.Bootstrap())
				if s == Faulty {
					t.TLS = e.WrongRoot(t.TLS.ServerName)
				}
				_, err := e.Probe.Watch(ctx, t)
				return err
			},
		},
		{
			ID: "tls/plaintext-to-tls-port", Layer: LayerTLS, Labels: []string{LabelProbe},
			Summary: "the ingress refuses plaintext h2c on its TLS port",
			Expect:  FailClosed(reason.PlaintextToTLS), Control: "tls/verified-watch",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				t := e.Ingress(e.Bootstrap())
				t.TLS.Plaintext = s == Faulty
				_, err := e.Probe.Watch(ctx, t)
				return err
			},
		},
		{
			ID: "tls/pylon-verified", Layer: LayerTLS, Labels: []string{LabelPylon},
			Summary:  "the cell's Pylon watches and registers over verified TLS with its trust source",
			Requires: Requirements{Trusts: matrix.Trusts, Profiles: matrix.Profiles},
			Expect:   Pass,
			Try: func(ctx context.Context, e *Env, _ Setting) error {
				return e.PylonRegisteredEverywhere(ctx, manifests.PylonName, waitPylon)
			},
		},
		serverCertScenario("tls/wrong-root-server", pki.ServerWrongRoot, reason.UnknownAuthority,
			"Pylon refuses an ingress whose certificate chains to an untrusted root"),
		serverCertScenario("tls/wrong-hostname", pki.ServerWrongHost, reason.HostnameMismatch,
			"Pylon refuses an ingress certificate that does not cover the dial hostname"),
		serverCertScenario("tls/expired-server-cert", pki.ServerExpired, reason.Expired,
			"Pylon refuses an expired ingress certificate"),
		{
			ID: "tls/missing-trust", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
			Summary:  "a Pylon whose configured trust bundle does not exist refuses to start its connections",
			Requires: Requirements{Workloads: independentOfWorkload, Trusts: bundleTrusts},
			Expect:   FailClosed(reason.NoTrust), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				v := PylonVariant{Name: "missing-trust"}
				if s == Faulty {
					missing := manifests.TrustDir + "/does-not-exist.pem"
					v.Overrides.Env = map[string]string{manifests.EnvTLSCertPath: missing}
					if e.Deployed.Cell.Trust == matrix.GRPCOverride {
						v.Overrides.Env = map[string]string{manifests.EnvGRPCCAPath: missing}
					}
				}
				return e.WithPylon(ctx, v, func(ctx context.Context, name string) error { return e.PylonOutcome(ctx, name, waitPylon) })
			},
		},
		{
			ID: "tls/malformed-bundle", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
			Summary:  "a Pylon whose trust bundle is partially malformed rejects it as a whole",
			Requires: Requirements{Workloads: independentOfWorkload, Trusts: bundleTrusts},
			Expect:   FailClosed(reason.NoTrust), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				v := PylonVariant{Name: "malformed-bundle"}
				if s == Faulty {
					if e.Deployed.Cell.Trust == matrix.GRPCOverride {
						v.Overrides.CustomTrustConfigMap = pki.ConfigMapName(pki.BundleMalformed)
					} else {
						v.Overrides.TrustConfigMap = pki.ConfigMapName(pki.BundleMalformed)
					}
				}
				return e.WithPylon(ctx, v, func(ctx context.Context, name string) error { return e.PylonOutcome(ctx, name, waitPylon) })
			},
		},
		{
			ID: "tls/explicit-http-refused", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
			Summary:  "in the secure profile Pylon refuses an explicit http:// bootstrap address",
			Requires: Requirements{Workloads: independentOfWorkload},
			Expect:   FailClosed(reason.InsecureRefused), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				v := PylonVariant{Name: "explicit-http"}
				if s == Faulty {
					v.Overrides.BootstrapURL = strings.Replace(e.Deployed.BootstrapURL, "https://", "http://", 1)
				}
				return e.WithPylon(ctx, v, func(ctx context.Context, name string) error { return e.PylonOutcome(ctx, name, waitPylon) })
			},
		},
		{
			ID: "tls/explicit-http-insecure-profile", Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
			Summary:  "in the insecure profile Pylon accepts an explicit http:// address and dials plaintext, which the TLS port still refuses",
			Requires: Requirements{Profiles: []matrix.Profile{matrix.Insecure}},
			Expect:   FailClosed(reason.PlaintextToTLS), Control: "tls/pylon-verified",
			Try: func(ctx context.Context, e *Env, s Setting) error {
				v := PylonVariant{Name: "explicit-http"}
				if s == Faulty {
					v.Overrides.BootstrapURL = strings.Replace(e.Deployed.BootstrapURL, "https://", "http://", 1)
				}
				return e.WithPylon(ctx, v, func(ctx context.Context, name string) error { return e.PylonOutcome(ctx, name, waitPylon) })
			},
		},
	}
}

// verifiedWatch watches every region through its ingress with the trusted
// root and requires concrete Stargates in each answer.
func verifiedWatch(ctx context.Context, e *Env, _ Setting) error {
	for _, r := range e.Regions() {
		resp, err := e.Probe.Watch(ctx, e.Ingress(r))
		if err != nil {
			return err
		}
		if len(resp.GetStargates()) == 0 {
			return fmt.Errorf("region %s: WatchStargates over verified TLS answered no Stargate", r)
		}
	}
	return nil
}

// serverCertScenario is a fail-closed case in which the bootstrap region's
// ingress serves a bad certificate and a fresh Pylon must refuse it.
func serverCertScenario(id string, p pki.Purpose, r reason.Reason, summary string) Scenario {
	return Scenario{
		ID: id, Layer: LayerTLS, Labels: []string{LabelPylon, LabelDeploys},
		Summary: summary, Requires: Requirements{Workloads: independentOfWorkload},
		Expect: FailClosed(r), Control: "tls/pylon-verified",
		Try: func(ctx context.Context, e *Env, s Setting) error {
			purpose := pki.ServerGood
			if s == Faulty {
				purpose = p
			}
			return e.WithIngressCert(ctx, e.Bootstrap(), purpose, func(ctx context.Context) error {
				return e.WithPylon(ctx, PylonVariant{Name: strings.TrimPrefix(id, "tls/")}, func(ctx context.Context, name string) error {
					return e.PylonOutcome(ctx, name, waitPylon)
				})
			})
		},
	}
}
