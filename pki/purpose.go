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
	// ServerNotYetValid starts half a validity period after minting.
	ServerNotYetValid Purpose = "server-not-yet-valid"
	// ServerWrongRoot is signed by the untrusted wrong root.
	ServerWrongRoot Purpose = "server-wrong-root"
	// ServerNoServerAuth carries the client-auth usage only.
	ServerNoServerAuth Purpose = "server-no-serverauth"
	// ServerCNOnly has the name in its CN and no SAN at all.
	ServerCNOnly Purpose = "server-cn-only"
)

// Client certificates (RoleClient, per client identity).
const (
	ClientGood      Purpose = "client-good"
	ClientWrongRoot Purpose = "client-wrong-root"
	ClientExpired   Purpose = "client-expired"
)

// Trust bundles.
const (
	// BundleCustom holds the trusted root alone.
	BundleCustom Purpose = "bundle-custom"
	// BundleMerged is the system roots followed by the trusted root: the
	// shape of NVCF's nvcf-ca-bundle.pem.
	BundleMerged Purpose = "bundle-merged"
	// BundleMissing names a path that does not exist.
	BundleMissing Purpose = "bundle-missing"
	// BundleEmpty is an empty file.
	BundleEmpty Purpose = "bundle-empty"
	// BundleMalformed is a good PEM block followed by a truncated one.
	BundleMalformed Purpose = "bundle-malformed"
)

// Certificate authorities.
const (
	// Root is the trusted root.
	Root Purpose = "root"
	// WrongRoot is a root nobody trusts.
	WrongRoot Purpose = "wrong-root"
	// Intermediate sits between Root and the leaves when requested.
	Intermediate Purpose = "intermediate"
)

// ServerPurposes lists the server certificate purposes in minting order.
var ServerPurposes = []Purpose{ServerGood, ServerWrongHost, ServerExpired, ServerNotYetValid, ServerWrongRoot, ServerNoServerAuth, ServerCNOnly}

// ClientPurposes lists the client certificate purposes in minting order.
var ClientPurposes = []Purpose{ClientGood, ClientWrongRoot, ClientExpired}

// BundlePurposes lists the trust bundle purposes.
var BundlePurposes = []Purpose{BundleCustom, BundleMerged, BundleMissing, BundleEmpty, BundleMalformed}

func (p Purpose) server() bool { return strings.HasPrefix(string(p), "server-") }
func (p Purpose) client() bool { return strings.HasPrefix(string(p), "client-") }
