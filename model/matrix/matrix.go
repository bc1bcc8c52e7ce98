// Package matrix is the run matrix of the conformance suite: the axes a case
// runs under (Stargate workload kind, the worker's trust source, Stargate's
// peer discovery, the security profile), their expansion into cells, the
// plan of cells a run covers (Plan), stable cell names such as
// "workload=deployment,trust=bundle", and filters over cells.
//
// Cells share clusters: moving from one cell to the next redeploys only what
// differs (deploy), so Expand orders cells to keep consecutive cells
// one change apart.
package matrix

import (
	"fmt"
	"strings"
)

// Workload is how the Stargates of the topology's stargate clusters run.
type Workload string

// The workload axis.
const (
	// StatefulSet runs every region's Stargates as a StatefulSet.
	StatefulSet Workload = "statefulset"
	// Deployment runs every region's Stargates as a Deployment.
	Deployment Workload = "deployment"
	// Mixed runs the first stargate cluster as a StatefulSet and every other
	// one as a Deployment.
	Mixed Workload = "mixed"
)

// Trust is where the worker's Pylon gets the roots that verify Stargate.
type Trust string

// The trust axis.
const (
	// System places the test root in the process's system store through
	// SSL_CERT_FILE; no custom bundle flag is set.
	System Trust = "system"
	// Bundle points --tls-cert-path / STARGATE_TLS_CERT_PATH at the merged
	// system-plus-custom bundle of ConfigMap nvcf-transport-trust-bundle.
	Bundle Trust = "bundle"
	// GRPCOverride points STARGATE_GRPC_TLS_CA_CERT_PATH at the gRPC root
	// alone and STARGATE_TLS_CERT_PATH at the QUIC root alone: each plane
	// connects only through its own variable.
	GRPCOverride Trust = "grpc-override"
	// SystemPlusBundle places the test root in the process's system store
	// (SSL_CERT_FILE) and points STARGATE_TLS_CERT_PATH at a bundle holding
	// only an unrelated CA: the server chain is trusted through the system
	// roots alone, so Pylon connects only if custom roots are added to the
	// system roots, never replacing them (the epic's defect 2).
	SystemPlusBundle Trust = "system-plus-bundle"
)

// Discovery is how Stargate finds its peers, the identities it advertises
// in WatchStargates.
type Discovery string

// The discovery axis.
const (
	// EndpointSlice watches the EndpointSlices of the headless Service and
	// names peers by targetRef.name. The default.
	EndpointSlice Discovery = "endpointslice"
	// DNS looks up SRV _grpc._tcp.<headless service> at the cluster's DNS
	// (CoreDNS), which names Deployment pods by their dashed IP: the epic's
	// defect 4, which Stargate must not advertise.
	DNS Discovery = "dns"
)

// Profile is the security profile the components run under.
type Profile string

// The profile axis.
const (
	// Secure: every address is an explicit https:// URI; http is refused.
	Secure Profile = "secure"
	// Insecure: explicit http:// is accepted where it is written.
	Insecure Profile = "insecure"
)

// Kind is the Kubernetes workload kind of one cluster's Stargates.
type Kind string

// The workload kinds a cluster can run.
const (
	KindStatefulSet Kind = "StatefulSet"
	KindDeployment  Kind = "Deployment"
)

// Workloads, Trusts, Discoveries and Profiles list every value of each axis
// in their canonical order. SystemPlusBundle sits inside the trust order so
// that the snake order of Expand keeps the first trust of every workload
// kind (and so the cells of trust-independent cases) as it was before it
// was added.
var (
	Workloads   = []Workload{StatefulSet, Deployment, Mixed}
	Trusts      = []Trust{System, Bundle, SystemPlusBundle, GRPCOverride}
	Discoveries = []Discovery{EndpointSlice, DNS}
	Profiles    = []Profile{Secure, Insecure}
)

// Cell is one point of the matrix. The zero Discovery means EndpointSlice,
// the zero Profile Secure.
type Cell struct {
	Workload  Workload
	Trust     Trust
	Profile   Profile
	Discovery Discovery
}

// Normalize returns c with defaults filled (Profile Secure, Discovery
// EndpointSlice).
func (c Cell) Normalize() Cell {
	if c.Profile == "" {
		c.Profile = Secure
	}
	if c.Discovery == "" {
		c.Discovery = EndpointSlice
	}
	return c
}

// Validate reports the first axis value that is not known.
func (c Cell) Validate() error {
	c = c.Normalize()
	if !contains(Workloads, c.Workload) {
		return fmt.Errorf("workload %q unknown; want one of %s", c.Workload, Join(Workloads))
	}
	if !contains(Trusts, c.Trust) {
		return fmt.Errorf("trust %q unknown; want one of %s", c.Trust, Join(Trusts))
	}
	if !contains(Profiles, c.Profile) {
		return fmt.Errorf("profile %q unknown; want one of %s", c.Profile, Join(Profiles))
	}
	if !contains(Discoveries, c.Discovery) {
		return fmt.Errorf("discovery %q unknown; want one of %s", c.Discovery, Join(Discoveries))
	}
	return nil
}

// Name is the stable name of the cell, e.g. "workload=deployment,trust=bundle"
// or "workload=mixed,trust=system,discovery=dns". The discovery and the
// profile are named only when they are not the default (endpointslice,
// secure), so the names of existing cells never change when an axis is
// added.
func (c Cell) Name() string {
	c = c.Normalize()
	s := "workload=" + string(c.Workload) + ",trust=" + string(c.Trust)
	if c.Discovery != EndpointSlice {
		s += ",discovery=" + string(c.Discovery)
	}
	if c.Profile != Secure {
		s += ",profile=" + string(c.Profile)
	}
	return s
}

// String is Name.
func (c Cell) String() string { return c.Name() }

// KindFor returns the workload kind of the stargate cluster at position i
// among the topology's stargate clusters (0-based, topology order).
func (c Cell) KindFor(i int) Kind {
	switch c.Workload {
	case Deployment:
		return KindDeployment
	case Mixed:
		if i == 0 {
			return KindStatefulSet
		}
		return KindDeployment
	default:
		return KindStatefulSet
	}
}

// ParseCell parses a cell name as written by Name. Keys may come in any
// order; discovery (endpointslice) and profile (secure) may be left out.
func ParseCell(s string) (Cell, error) {
	var c Cell
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Cell{}, fmt.Errorf("cell %q: %q is not key=value; write e.g. workload=deployment,trust=bundle", s, part)
		}
		if seen[k] {
			return Cell{}, fmt.Errorf("cell %q: key %q given twice", s, k)
		}
		seen[k] = true
		switch k {
		case "workload":
			c.Workload = Workload(v)
		case "trust":
			c.Trust = Trust(v)
		case "profile":
			c.Profile = Profile(v)
		case "discovery":
			c.Discovery = Discovery(v)
		default:
			return Cell{}, fmt.Errorf("cell %q: key %q unknown; want workload, trust, discovery or profile", s, k)
		}
	}
	if c.Workload == "" || c.Trust == "" {
		return Cell{}, fmt.Errorf("cell %q: workload and trust are both required", s)
	}
	c = c.Normalize()
	if err := c.Validate(); err != nil {
		return Cell{}, fmt.Errorf("cell %q: %w", s, err)
	}
	return c, nil
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Join lists values of an axis, comma-separated, as help texts and errors
// name them: Join(Workloads) is "statefulset, deployment, mixed".
func Join[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
