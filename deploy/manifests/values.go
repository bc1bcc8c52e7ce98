package manifests

import (
	"fmt"

	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
)

// Values are the inputs of one cluster's manifests, in the spirit of a Helm
// chart's values: everything a user would set per cluster. Build them with
// deploy, which derives them from the topology, the PKI and a
// matrix cell; Render only turns them into objects.
type Values struct {
	// Namespace of every object (default "nvcf").
	Namespace string
	// Cluster is the topology name of the cluster (informational label).
	Cluster string
	// Profile is "secure" or "insecure"; the components refuse explicit
	// http:// addresses in secure profiles.
	Profile string
	// Images of the components; empty fields default to DefaultImage.
	Images Images
	// Flavor is the shape of the rendered containers: FlavorReference (the
	// default) or FlavorNVCF, in which they take NVCF's own flags, as its
	// charts render them, so real images run unchanged.
	Flavor Flavor
	// Build is what the real components of the nvcf flavor accept (nil:
	// nvcfbuild.Snapshot()). Rendering a feature the build lacks (the gRPC
	// CA override, reverse-QUIC client certificates) fails with an error
	// wrapping nvcfbuild.ErrUnsupported that names the missing flag. The
	// reference flavor ignores it.
	Build *nvcfbuild.Build
	// Stargate is set on stargate-role clusters.
	Stargate *Stargate
	// Worker is set on workers-role clusters.
	Worker *Worker
	// Defect switches registered defects on in one role (selftest only);
	// the zero value switches none.
	Defect Defect
}

// Defect switches on defects of package fixtures/defects in the containers
// of one role, with the test profile they require. `harness selftest` sets
// it; a normal run never does.
type Defect struct {
	// Role is the reference role (stargate, router, ingress, pylon).
	Role string `json:"role,omitempty"`
	// Names is the comma list of defect names.
	Names string `json:"names,omitempty"`
}

// envVars are the variables of Defect for a container of role.
func (d Defect) envVars(role string) []envVar {
	if d.Names == "" || d.Role != role {
		return nil
	}
	return []envVar{{Name: defects.EnvVar, Value: d.Names}, {Name: defects.ProfileEnvVar, Value: defects.ProfileTest}}
}

// Images names the container image of each component, so real component
// images can replace the reference ones.
type Images struct {
	Stargate string
	Router   string
	Ingress  string
	Pylon    string
	Echo     string
	// WorkerAuthGateway runs Stargate's --worker-auth-endpoint.
	WorkerAuthGateway string
}

// ImageComponents names the components --images takes, in its order.
var ImageComponents = []string{"stargate", "router", "ingress", "pylon", "echo", GatewayName}

// Field is the field of im that holds component's image (stargate,
// router, ingress, pylon, echo, or GatewayName), or nil for another name.
func (im *Images) Field(component string) *string {
	switch component {
	case "stargate":
		return &im.Stargate
	case "router":
		return &im.Router
	case "ingress":
		return &im.Ingress
	case "pylon":
		return &im.Pylon
	case "echo":
		return &im.Echo
	case GatewayName:
		return &im.WorkerAuthGateway
	}
	return nil
}

// Flavor selects the shape of the rendered containers.
type Flavor string

const (
	// FlavorReference passes the reference roles their own flags, with the
	// role as first argument (the default).
	FlavorReference Flavor = "reference"
	// FlavorNVCF passes NVCF's flags as its llm-request-router chart and
	// its worker launch render them (docs/nvcf-compat.md lists each with
	// its source); real images run unchanged, and so do the reference
	// roles, which accept those names and take the role from $NVCF_REF_ROLE.
	FlavorNVCF Flavor = "nvcf"
)

// Flavors lists the flavors, the default first.
var Flavors = []Flavor{FlavorReference, FlavorNVCF}

// ParseFlavor parses a flavor's name; empty means FlavorReference.
func ParseFlavor(s string) (Flavor, error) {
	if s == "" {
		return FlavorReference, nil
	}
	for _, f := range Flavors {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("flavor %q: want %s or %s", s, FlavorReference, FlavorNVCF)
}

// DefaultImage is the reference multi-role image; its first argument is the role.
const DefaultImage = "nvcf-ref:dev"

// Stargate configures a stargate-role cluster: Stargates, backend router,
// TLS ingress, QUIC relay and the external load balancers.
type Stargate struct {
	// Kind is the matrix's workload kind (matrix.KindStatefulSet or
	// matrix.KindDeployment, the chart's workload.kind switch).
	Kind matrix.Kind
	// Replicas of the Stargate workload.
	Replicas int
	// Discovery is the matrix's discovery mode: matrix.EndpointSlice (the
	// default) or matrix.DNS (SRV at the cluster's DNS, dashed-IP targets
	// resolved to pod names through the EndpointSlices).
	Discovery matrix.Discovery
	// IdentityTemplate maps a pod name to its advertised identity, e.g.
	// "{pod_name}.sg.region-a.nvcf.test".
	IdentityTemplate string
	// GRPCHost, QUICHost and HTTPHost are the external hostnames announced
	// on the load balancers.
	GRPCHost string
	QUICHost string
	HTTPHost string
	// GRPCPylonDialAddr is what Pylon dials for gRPC, e.g.
	// "https://stargate.region-a.nvcf.test:50071".
	GRPCPylonDialAddr string
	// QUICPylonDialAddr is where Pylon dials UDP, e.g. "quic.region-a.nvcf.test:50072".
	QUICPylonDialAddr string
	// RemoteWatchURLs are the WatchStargates URLs of remote regions.
	RemoteWatchURLs []string
	// AuthSecret names the Secret whose key "token" is the worker token:
	// the worker-auth gateway (GatewayName) maps it, and Stargate's
	// --worker-auth-endpoint checks registration bearer tokens and tunnel
	// tokens against the gateway. Empty means no gateway and no check.
	AuthSecret string
	// ClientCA turns on the mutual-TLS profile of reverse QUIC: the
	// router's relay, which terminates QUIC, requires client certificates
	// chaining to the custom roots (CustomTrustConfigMap); Stargate keeps
	// checking the token.
	ClientCA bool
	// IngressSecret and QUICSecret name the kubernetes.io/tls Secrets of the
	// ingress and of the QUIC listeners (defaults IngressTLSSecret and
	// QUICTLSSecret); a scenario may point them at a bad credential.
	IngressSecret string
	QUICSecret    string
	// TrustConfigMap names the ConfigMap whose merged bundle the server
	// side trusts (remote watch, upstream QUIC); default TrustBundleConfigMap.
	TrustConfigMap string
}

// Worker configures a workers-role cluster: Pylon beside the echo server.
type Worker struct {
	// Pylons are the Pylon Deployments to render: the base one and any
	// variants a scenario asked for.
	Pylons []Pylon
}

// Pylon is one Pylon Deployment (with its echo sidecar).
type Pylon struct {
	// Name of the Deployment: "pylon" for the base, "pylon-<variant>" else.
	Name string
	// Variant is empty for the base Pylon, else the variant's name.
	Variant string
	// BootstrapURL is Pylon's LLM_REQUEST_ROUTER_ADDRESS.
	BootstrapURL string
	// Trust is the matrix's trust source of Pylon.
	Trust matrix.Trust
	// TrustConfigMap names the ConfigMap of the merged bundle, mounted at
	// TrustDir (default TrustBundleConfigMap; for trust grpc-override
	// QUICTrustConfigMap); a variant may point at a bad one (pki names
	// "-empty" and "-malformed" variants).
	TrustConfigMap string
	// CustomTrustConfigMap names the ConfigMap of the custom roots, mounted
	// at CustomTrustDir (default CustomTrustConfigMap; for trust
	// system-plus-bundle UnrelatedTrustConfigMap, for grpc-override
	// GRPCTrustConfigMap).
	CustomTrustConfigMap string
	// AuthSecret names the Secret holding the reverse-tunnel token (key
	// "token"); empty means no token.
	AuthSecret string
	// ClientTLSSecret names a kubernetes.io/tls Secret for reverse-QUIC
	// mutual TLS; empty means none.
	ClientTLSSecret string
	// InferenceServerID identifies the echo server in registrations
	// (default ServerID's).
	InferenceServerID string
	// Env are extra environment variables (a variant's overrides win over
	// the computed ones).
	Env map[string]string
}

// ServerID is the inference server id the Pylon registers:
// InferenceServerID, else "echo-<Name>".
func (p Pylon) ServerID() string {
	if p.InferenceServerID != "" {
		return p.InferenceServerID
	}
	return "echo-" + p.Name
}
