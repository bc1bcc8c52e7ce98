package pki

import "strings"

// Purpose says what an artifact is for: the good credential, one of the
// deliberately bad ones, a CA or a trust bundle.
type Purpose string

// Server certificates (minted per cluster for RoleGRPC and RoleQUIC).
const (
	// ServerGood verifies for its intended name.
	ServerGood Purpose = "server-good"
	// ServerWrongHost has a valid chain but SANs that miss the dial name.
	ServerWrongHost Purpose = "server-wrong-host"
	// ServerExpired ended a day before minting.
	ServerExpired Purpose = "server-expired"
	// serverNotYetValid starts half a validity period after minting.
	serverNotYetValid Purpose = "server-not-yet-valid"
	// ServerWrongRoot is signed by the untrusted wrong root.
	ServerWrongRoot Purpose = "server-wrong-root"
	// serverNoServerAuth carries the client-auth usage only.
	serverNoServerAuth Purpose = "server-no-serverauth"
	// serverCNOnly has the name in its CN and no SAN at all.
	serverCNOnly Purpose = "server-cn-only"
	// ServerIdentityOnly (RoleGRPC only) covers the names carried as
	// :authority (ClusterNames.Authorities) and not the dial host: what a
	// client that verified the :authority instead of the dial host would
	// accept.
	ServerIdentityOnly Purpose = "server-identity-only"
)

// Client certificates (RoleClient, per client identity).
const (
	ClientGood      Purpose = "client-good"
	ClientWrongRoot Purpose = "client-wrong-root"
	clientExpired   Purpose = "client-expired"
)

// Trust bundles.
const (
	// BundleCustom holds the trusted roots alone (Root, then QUICRoot).
	BundleCustom Purpose = "bundle-custom"
	// bundleMerged is the system roots followed by the trusted roots: the
	// shape of NVCF's nvcf-ca-bundle.pem.
	bundleMerged Purpose = "bundle-merged"
	// bundleMissing names a path that does not exist.
	bundleMissing Purpose = "bundle-missing"
	// bundleEmpty is an empty file.
	bundleEmpty Purpose = "bundle-empty"
	// BundleMalformed is the trusted roots followed by a truncated PEM block.
	BundleMalformed Purpose = "bundle-malformed"
	// BundleUnrelated holds the unrelated root alone: a well-formed custom
	// bundle that verifies none of the run's servers, for the condition in
	// which the server chain is trusted only through the system roots.
	BundleUnrelated Purpose = "bundle-unrelated"
	// BundleGRPC holds Root alone: it verifies the ingress (gRPC) and no
	// QUIC relay, the gRPC override of a trust source that keeps the two
	// planes apart.
	BundleGRPC Purpose = "bundle-grpc"
	// BundleQUIC holds QUICRoot alone: it verifies the QUIC relays and no
	// ingress, the reverse-QUIC bundle beside BundleGRPC.
	BundleQUIC Purpose = "bundle-quic"
)

// Certificate authorities.
const (
	// Root is the trusted root of the ingress (gRPC) and client
	// certificates.
	Root Purpose = "root"
	// QUICRoot is the trusted root of the QUIC relay certificates, apart
	// from Root so that one plane's trust never verifies the other's.
	QUICRoot Purpose = "quic-root"
	// WrongRoot is a root nobody trusts.
	WrongRoot Purpose = "wrong-root"
	// UnrelatedRoot is a root that signs nothing: trusting it changes no
	// verdict (unlike WrongRoot, which signs the wrong-root leaves).
	UnrelatedRoot Purpose = "unrelated-root"
	// intermediate sits between Root and its leaves when requested,
	// quicIntermediate between QUICRoot and its leaves.
	intermediate     Purpose = "intermediate"
	quicIntermediate Purpose = "quic-intermediate"
)

// serverPurposes lists the server certificate purposes in minting order.
var serverPurposes = []Purpose{ServerGood, ServerWrongHost, ServerExpired, serverNotYetValid, ServerWrongRoot, serverNoServerAuth, serverCNOnly}

// ingressPurposes lists the server certificate purposes minted for the
// ingress (RoleGRPC) alone, after serverPurposes, for a cluster that names
// authorities.
var ingressPurposes = []Purpose{ServerIdentityOnly}

// clientPurposes lists the client certificate purposes in minting order.
var clientPurposes = []Purpose{ClientGood, ClientWrongRoot, clientExpired}

// bundlePurposes lists the trust bundle purposes.
var bundlePurposes = []Purpose{BundleCustom, bundleMerged, bundleMissing, bundleEmpty, BundleMalformed, BundleUnrelated, BundleGRPC, BundleQUIC}

func (p Purpose) server() bool { return strings.HasPrefix(string(p), "server-") }
func (p Purpose) client() bool { return strings.HasPrefix(string(p), "client-") }
