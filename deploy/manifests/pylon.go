package manifests

import (
	"sort"

	"github.com/nvcf/conformance/model/matrix"
)

// envVar is one environment variable of a rendered container.
type envVar struct {
	Name  string
	Value string
}

// The environment variables of Pylon's trust, bootstrap and token.
const (
	EnvBootstrap     = "LLM_REQUEST_ROUTER_ADDRESS"
	EnvSSLCertFile   = "SSL_CERT_FILE"
	EnvTLSCertPath   = "STARGATE_TLS_CERT_PATH"
	EnvGRPCCAPath    = "STARGATE_GRPC_TLS_CA_CERT_PATH"
	EnvAuthTokenFile = "STARGATE_AUTH_TOKEN_FILE"
)

// envVars computes Pylon's environment (besides the downward-API POD_*
// variables) in flavor f, sorted by name. In the reference flavor:
//   - LLM_REQUEST_ROUTER_ADDRESS = BootstrapURL;
//   - trust system: SSL_CERT_FILE = the merged bundle (the test root in the
//     process's system store), no custom bundle flag;
//   - trust bundle: STARGATE_TLS_CERT_PATH = the merged bundle;
//   - trust grpc-override: STARGATE_GRPC_TLS_CA_CERT_PATH = the custom mount,
//     which then holds the gRPC root alone, and STARGATE_TLS_CERT_PATH = the
//     trust mount, which then holds the QUIC root alone: only a Pylon that
//     keeps each plane on its own variable connects;
//   - trust system-plus-bundle: SSL_CERT_FILE = the merged bundle, and
//     STARGATE_TLS_CERT_PATH = the custom mount, which then holds only an
//     unrelated CA: the server chain verifies through the system roots
//     alone, so custom roots must be added to them, never replace them;
//   - STARGATE_AUTH_TOKEN_FILE when AuthSecret is set.
//
// In the nvcf flavor the merged bundle is mounted as the system store
// (systemStorePath), as NVCF's compute plane does, and
// STARGATE_TLS_CERT_PATH points there in every trust source but
// system-plus-bundle (where it is the unrelated CA, as above; under
// grpc-override that store holds the QUIC root alone): a real
// Pylon's reverse tunnel trusts only that file (or --quic-insecure, which
// no cell sets), never the system roots, and the compute plane's
// injection sets it to the same path. The token file is a flag, and the
// reference-only settings (profile, cluster id) are variables a real
// image ignores.
//
// Env overrides win; an override with an empty value removes the variable
// (a "missing trust" variant, say).
func (p Pylon) envVars(f Flavor, profile, cluster string) []envVar {
	env := map[string]string{EnvBootstrap: p.BootstrapURL}
	bundle := BundlePath
	if f == FlavorNVCF {
		bundle = systemStorePath
		env["INSTANCE_ID"] = p.InferenceServerID
		env["PYLON_PROFILE"] = profile
		env["PYLON_CLUSTER_ID"] = cluster
		env[RoleEnv] = PylonName
	}
	// In the nvcf flavor the merged bundle is the mounted system store,
	// so no variable points the process at it.
	systemStore := f != FlavorNVCF
	switch p.Trust {
	case matrix.System:
		if systemStore {
			env[EnvSSLCertFile] = BundlePath
		} else {
			env[EnvTLSCertPath] = systemStorePath
		}
	case matrix.Bundle:
		env[EnvTLSCertPath] = bundle
	case matrix.GRPCOverride:
		env[EnvGRPCCAPath] = customRootsPath
		env[EnvTLSCertPath] = bundle
	case matrix.SystemPlusBundle:
		if systemStore {
			env[EnvSSLCertFile] = BundlePath
		}
		env[EnvTLSCertPath] = customRootsPath
	}
	if p.AuthSecret != "" && f != FlavorNVCF {
		env[EnvAuthTokenFile] = authTokenPath
	}
	for k, v := range p.Env {
		if v == "" {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	out := make([]envVar, 0, len(env))
	for k, v := range env {
		out = append(out, envVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// labels of a Pylon's objects and pods; a variant also carries VariantLabel.
func (p Pylon) labels() map[string]string {
	l := Labels(PylonName, p.Name)
	if p.Variant != "" {
		l[VariantLabel] = p.Variant
	}
	return l
}
