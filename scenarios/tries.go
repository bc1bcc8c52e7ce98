package scenarios

import (
	"context"

	"github.com/nvcf/conformance/pki"
)

// Setting selects the configuration a scenario's steps run with.
type Setting int

const (
	// Faulty is the scenario's own configuration: for a fail-closed
	// scenario, the bad ingredient it is about.
	Faulty Setting = iota
	// AsControl replaces the bad ingredient by its positive control's
	// configuration; the same steps must then succeed.
	AsControl
)

func (s Setting) String() string {
	if s == AsControl {
		return "control configuration"
	}
	return "own configuration"
}

// Try performs a scenario's steps and returns what was observed: nil when
// the thing worked end to end, else an error carrying (reason.Of) why it
// failed.
type Try func(ctx context.Context, e *Env, s Setting) error

// tries attaches its steps to every scenario of the catalogue
// (catalog.Catalogue), by ID, in the catalogue's order: what each case
// does, where the declaration (package catalog, one file per layer) says
// what it shows and expects. The steps live in the step files (steps.go,
// steps_<layer>.go, variants*.go). Every catalogue ID has exactly one Try
// here and every Try a catalogue ID (TestEveryScenarioHasItsSteps).
var tries = map[string]Try{
	// catalog/tls.go
	"tls/verified-watch":                 verifiedWatch,
	"tls/wrong-root":                     watchBootstrapIngress(trustingAnotherRoot),
	"tls/plaintext-to-tls-port":          watchBootstrapIngress(inPlaintext),
	"tls/pylon-verified":                 pylonRegisteredEverywhere(waitPylon),
	"tls/wrong-root-server":              freshPylonAgainstIngressCert("wrong-root-server", pki.ServerWrongRoot),
	"tls/wrong-hostname":                 freshPylonAgainstIngressCert("wrong-hostname", pki.ServerWrongHost),
	"tls/ingress-cert-identity-only":     freshPylonAgainstIngressCert("identity-only", pki.ServerIdentityOnly),
	"tls/expired-server-cert":            freshPylonAgainstIngressCert("expired-server-cert", pki.ServerExpired),
	"tls/system-roots-lack-server-ca":    freshPylon("system-roots-lack-ca", withSystemStoreLackingTheRoot),
	"tls/missing-trust":                  freshPylon("missing-trust", withMissingTrustBundle),
	"tls/malformed-bundle":               freshPylon("malformed-bundle", withMalformedTrustBundle),
	"tls/explicit-http-refused":          freshPylon("explicit-http", withHTTPBootstrap),
	"tls/scheme-less-bootstrap-refused":  freshPylon("scheme-less-bootstrap", withSchemeLessBootstrap),
	"tls/empty-bootstrap-refused":        freshPylon("empty-bootstrap", withoutBootstrap),
	"tls/ip-literal-bootstrap":           freshPylonDialingIngressByIP("ip-literal-bootstrap"),
	"tls/explicit-http-insecure-profile": freshPylon("explicit-http", withHTTPBootstrap),
	// catalog/authority.go
	"authority/routes-to-named": routesToNamed,
	"authority/missing":         registerNaming(theDialHost),
	"authority/unknown":         registerNaming(aStargateElsewhere),
	"authority/no-such-pod":     registerNamingAbsent(func(*Env, string, Pod) string { return noSuchPod }),
	"authority/not-ready":       registerNamingUnroutable((*Env).WithNotReadyStargate),
	"authority/terminating":     registerNamingUnroutable((*Env).WithTerminatingStargate),
	"authority/dashed-ip":       registerNamingAbsent(thePodsDashedName),
	// catalog/discovery.go
	"discovery/identities":         everyRegionAdvertisesLivePods,
	"discovery/srv-dashed-ip":      srvTargetsResolvedToPodNames,
	"discovery/no-dashed-identity": noReplicaAdvertisesDeadOrDashed,
	"discovery/pod-replacement":    podReplacement,
	// catalog/watch.go
	"watch/cross-region":               crossRegionWatch,
	"watch/scheme-less-remote-refused": loneStargateWatchingRemote("scheme-less-remote", withoutScheme),
	"watch/ip-literal-remote":          remoteWatchedByStargate(loneStargateWatchingRemoteAs("ip-literal-remote", byIngressIP)),
	"watch/http-to-tls-remote-refused": loneStargateWatchingRemote("http-to-tls-remote", overHTTP),
	"watch/empty-remote-refused":       loneStargateWatchingRemote("empty-remote", emptied),
	// catalog/registration.go
	"registration/every-stargate-every-region":   pylonRegisteredEverywhere(waitConverge),
	"registration/explicit-https":                explicitHTTPS,
	"registration/scheme-less-dial-addr-refused": loneStargateAdvertising("scheme-less-dial-addr", withoutScheme),
	"registration/http-dial-addr-refused":        loneStargateAdvertising("http-dial-addr", overHTTP),
	"registration/empty-dial-addr-refused":       loneStargateAdvertising("empty-dial-addr", emptied),
	"registration/rogue-ack":                     rogueAck,
	// catalog/quic.go
	"quic/tunnel-up":             bringTunnelUp(nil),
	"quic/bad-token":             bringTunnelUp(withWrongToken),
	"quic/unregistered-tunnel":   bringTunnelUp(withUnregisteredID),
	"quic/missing-client-cert":   bringTunnelUp(withoutClientCert),
	"quic/untrusted-client-cert": bringTunnelUp(withUntrustedClientCert),
	"quic/wrong-server-root":     bringTunnelUp(trustingAnotherServerRoot),
	"quic/unknown-sni":           tunnelToAbsentPod,
	"quic/not-ready":             tunnelToUnroutable((*Env).WithNotReadyStargate),
	"quic/terminating":           tunnelToUnroutable((*Env).WithTerminatingStargate),
	"quic/pylon-tunnel":          pylonTunnelsConnected,
	// catalog/invocation.go
	"invocation/in-region":           invokesInBootstrap,
	"invocation/across-regions":      invokesInEveryRemoteRegion,
	"invocation/model-discovery":     everyBootstrapStargateListsEcho,
	"invocation/no-eligible-backend": invokeUnservedModel,
	// catalog/resilience.go
	"resilience/stargate-pod-killed": inOrder(
		podReplacement,
		invokesInBootstrap,
		// Once the dead pod left the EndpointSlice, no invocation may reach it.
		invokeRepeatedly(5, "after the kill %d", "invocation %d after the replacement settled"),
	),
	"resilience/partition-workers-remote": partitionRemote,
	"resilience/quic-loss-delay": inOrder(
		before("the fault", invokesInBootstrap),
		duringFault(quicLossAndDelay, invokeRepeatedly(5, "under loss %d", "invocation %d under 20%% loss")),
		everyBootstrapStargateInvokes,
	),
	"resilience/quic-blackhole-reconnect": inOrder(
		before("the fault", invokesInBootstrap),
		faultRunsOut(quicBlackhole),
		everyBootstrapStargateInvokes,
	),
	"resilience/downgrade-mitm": freshPylonUnderFault("downgrade", downgradeMITM),
	"resilience/dns-spoof":      freshPylonUnderFault("dns-spoof", dnsSpoofToRemote),
	"resilience/cert-rotation-good": inOrder(
		// A tunnel still recovering from an earlier case would fail an
		// invocation during the rotation for reasons it never caused.
		before("the rotation", everyBootstrapStargateInvokes),
		goodRotationIsSeamless,
	),
	"resilience/cert-rotation-wrong-root": watchAfterRotation,
}
