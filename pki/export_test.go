package pki

import "time"

// Internals exposed to the external tests.

// TimeStale is (*Manifest).timeStale.
func TimeStale(m *Manifest, now time.Time) string { return m.timeStale(now) }

// ParseBundle is parseBundle.
var ParseBundle = parseBundle

// WrongHost is wrongHost.
var WrongHost = wrongHost

// Purposes, artifact kinds, labels and names only the tests name.
const (
	ServerCNOnly       = serverCNOnly
	ServerNoServerAuth = serverNoServerAuth
	ServerNotYetValid  = serverNotYetValid
	ClientExpired      = clientExpired
	BundleMerged       = bundleMerged
	BundleMissing      = bundleMissing
	BundleEmpty        = bundleEmpty
	Intermediate       = intermediate
	QUICIntermediate   = quicIntermediate

	KindSecret    = kindSecret
	KindConfigMap = kindConfigMap

	LabelManagedBy = labelManagedBy
	LabelPurpose   = labelPurpose
	LabelRole      = labelRole
	LabelExpect    = labelExpect
	ManagedBy      = managedBy

	ManifestFile = manifestFile
	SampleLabel  = sampleLabel
)

// The purpose lists, and the classifier of verification errors.
var (
	ServerPurposes      = serverPurposes
	IngressPurposes     = ingressPurposes
	ClientPurposes      = clientPurposes
	BundlePurposes      = bundlePurposes
	ClassifyVerifyError = classifyVerifyError
)
