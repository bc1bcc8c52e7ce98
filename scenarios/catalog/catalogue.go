package catalog

// Catalogue is the explicit list of every scenario, layer by layer. Each
// entry is a small constructor in its layer's file (tls.go, authority.go,
// …); its steps are attached by ID in package scenarios (tries.go) and
// live in its step files (steps*.go).
func Catalogue() []Scenario {
	return []Scenario{
		// tls.go
		tlsVerifiedWatch(),
		tlsWrongRoot(),
		tlsPlaintextToTLSPort(),
		tlsPylonVerified(),
		tlsWrongRootServer(),
		tlsWrongHostname(),
		tlsIngressCertIdentityOnly(),
		tlsExpiredServerCert(),
		tlsSystemRootsLackServerCA(),
		tlsMissingTrust(),
		tlsMalformedBundle(),
		tlsExplicitHTTPRefused(),
		tlsSchemeLessBootstrapRefused(),
		tlsEmptyBootstrapRefused(),
		tlsIPLiteralBootstrap(),
		tlsExplicitHTTPInsecureProfile(),
		// authority.go
		authorityRoutesToNamed(),
		authorityMissing(),
		authorityUnknown(),
		authorityNoSuchPod(),
		authorityNotReady(),
		authorityTerminating(),
		authorityDashedIP(),
		// discovery.go
		discoveryIdentities(),
		discoveryNoDashedIdentity(),
		discoverySRVDashedIP(),
		discoveryPodReplacement(),
		// watch.go
		watchCrossRegion(),
		watchSchemeLessRemoteRefused(),
		watchHTTPToTLSRemoteRefused(),
		watchIPLiteralRemote(),
		watchEmptyRemoteRefused(),
		// registration.go
		registrationEveryStargateEveryRegion(),
		registrationExplicitHTTPS(),
		registrationSchemeLessDialAddrRefused(),
		registrationHTTPDialAddrRefused(),
		registrationEmptyDialAddrRefused(),
		registrationRogueAck(),
		// quic.go
		quicTunnelUp(),
		quicBadToken(),
		quicUnregisteredTunnel(),
		quicMissingClientCert(),
		quicUntrustedClientCert(),
		quicWrongServerRoot(),
		quicUnknownSNI(),
		quicNotReady(),
		quicTerminating(),
		quicPylonTunnel(),
		// invocation.go
		invocationInRegion(),
		invocationAcrossRegions(),
		invocationModelDiscovery(),
		invocationNoEligibleBackend(),
		// resilience.go
		resilienceStargatePodKilled(),
		resiliencePartitionWorkersRemote(),
		resilienceQUICLossDelay(),
		resilienceQUICBlackholeReconnect(),
		resilienceDowngradeMITM(),
		resilienceDNSSpoof(),
		resilienceCertRotationGood(),
		resilienceCertRotationWrongRoot(),
	}
}

// ByID returns the scenario with id from the catalogue.
func ByID(id string) (Scenario, bool) {
	for _, s := range Catalogue() {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}
