package manifests

import (
	"fmt"
	"strings"

	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
)

// withDefaults fills defaults and validates v, naming the bad value.
func (v Values) withDefaults() (Values, error) {
	if v.Namespace == "" {
		v.Namespace = Namespace
	}
	if v.Profile == "" {
		v.Profile = "secure"
	}
	v.Images = v.Images.withDefaults()
	if v.Flavor == "" {
		v.Flavor = FlavorReference
	}
	if _, err := ParseFlavor(string(v.Flavor)); err != nil {
		return v, err
	}
	if !topology.IsDNSLabel(v.Namespace) {
		return v, fmt.Errorf("namespace %q: want a DNS label", v.Namespace)
	}
	if v.Profile != "secure" && v.Profile != "insecure" {
		return v, fmt.Errorf("profile %q: want secure or insecure", v.Profile)
	}
	if err := v.checkBuild(); err != nil {
		return v, err
	}
	if v.Stargate == nil && v.Worker == nil {
		return v, fmt.Errorf("cluster %q: neither Stargate nor Worker values set; set one", v.Cluster)
	}
	if v.Stargate != nil {
		s := *v.Stargate
		if err := s.validate(v.Profile); err != nil {
			return v, fmt.Errorf("cluster %q: stargate: %w", v.Cluster, err)
		}
		if s.Discovery == "" {
			s.Discovery = matrix.EndpointSlice
		}
		s.IngressSecret = or(s.IngressSecret, IngressTLSSecret)
		s.QUICSecret = or(s.QUICSecret, QUICTLSSecret)
		s.TrustConfigMap = or(s.TrustConfigMap, TrustBundleConfigMap)
		v.Stargate = &s
	}
	if v.Worker != nil {
		w := Worker{Pylons: make([]Pylon, len(v.Worker.Pylons))}
		seen := map[string]bool{}
		for i, p := range v.Worker.Pylons {
			trustCM, custom := TrustBundleConfigMap, CustomTrustConfigMap
			switch p.Trust {
			case matrix.SystemPlusBundle:
				custom = UnrelatedTrustConfigMap
			case matrix.GRPCOverride:
				// Each plane's variable holds its own root alone, so a
				// Pylon that reads one plane's trust for the other fails.
				trustCM, custom = QUICTrustConfigMap, GRPCTrustConfigMap
			}
			p.TrustConfigMap = or(p.TrustConfigMap, trustCM)
			p.CustomTrustConfigMap = or(p.CustomTrustConfigMap, custom)
			p.InferenceServerID = p.ServerID()
			if err := p.validate(v.Profile); err != nil {
				return v, fmt.Errorf("cluster %q: pylon %q: %w", v.Cluster, p.Name, err)
			}
			if seen[p.Name] {
				return v, fmt.Errorf("cluster %q: pylon %q given twice", v.Cluster, p.Name)
			}
			seen[p.Name] = true
			w.Pylons[i] = p
		}
		v.Worker = &w
	}
	return v, nil
}

// build is the build the nvcf flavor renders for: Values.Build, else the
// committed snapshot.
func (v Values) build() nvcfbuild.Build {
	if v.Build != nil {
		return *v.Build
	}
	return nvcfbuild.Snapshot()
}

// Features lists what the values need of a build beyond the flavor's
// base flags: the mutual-TLS profile (client certificates on Pylon, a
// client CA on the router's relay) and Pylon's gRPC CA override.
func (v Values) Features() []nvcfbuild.Feature {
	var out []nvcfbuild.Feature
	add := func(f nvcfbuild.Feature) {
		for _, g := range out {
			if g.Name == f.Name {
				return
			}
		}
		out = append(out, f)
	}
	if v.Stargate != nil && v.Stargate.ClientCA {
		add(nvcfbuild.TunnelClientCert)
	}
	if v.Worker != nil {
		for _, p := range v.Worker.Pylons {
			if p.ClientTLSSecret != "" {
				add(nvcfbuild.TunnelClientCert)
			}
			if p.Trust == matrix.GRPCOverride {
				add(nvcfbuild.GRPCCAOverride)
			}
		}
	}
	return out
}

// checkBuild refuses, in the nvcf flavor, values that need a flag the
// build lacks: a real binary would refuse the flag, or ignore the
// variable and run something other than what the cell is about.
func (v Values) checkBuild() error {
	if v.Flavor != FlavorNVCF {
		return nil
	}
	if err := v.build().Check(v.Features()...); err != nil {
		return fmt.Errorf("cluster %q, flavor nvcf: %w", v.Cluster, err)
	}
	return nil
}

func (i Images) withDefaults() Images {
	for _, f := range []*string{&i.Stargate, &i.Router, &i.Ingress, &i.Pylon, &i.Echo, &i.WorkerAuthGateway} {
		if *f == "" {
			*f = DefaultImage
		}
	}
	return i
}

func (s Stargate) validate(profile string) error {
	if s.Kind != matrix.KindStatefulSet && s.Kind != matrix.KindDeployment {
		return fmt.Errorf("kind %q: want %s or %s", s.Kind, matrix.KindStatefulSet, matrix.KindDeployment)
	}
	if s.Replicas < 1 {
		return fmt.Errorf("replicas %d: want at least 1", s.Replicas)
	}
	if s.Discovery != "" && s.Discovery != matrix.EndpointSlice && s.Discovery != matrix.DNS {
		return fmt.Errorf("discovery %q: want %s or %s", s.Discovery, matrix.EndpointSlice, matrix.DNS)
	}
	if !strings.Contains(s.IdentityTemplate, "{pod_name}") {
		return fmt.Errorf("identity template %q: must contain {pod_name}", s.IdentityTemplate)
	}
	for name, h := range map[string]string{"GRPCHost": s.GRPCHost, "QUICHost": s.QUICHost, "HTTPHost": s.HTTPHost} {
		if h == "" {
			return fmt.Errorf("%s is empty; derive it from the topology", name)
		}
	}
	if s.QUICPylonDialAddr == "" {
		return fmt.Errorf("QUIC pylon dial address is empty")
	}
	if err := checkURL("grpc pylon dial address", s.GRPCPylonDialAddr, profile); err != nil {
		return err
	}
	for _, u := range s.RemoteWatchURLs {
		if err := checkURL("remote watch URL", u, profile); err != nil {
			return err
		}
	}
	return nil
}

func (p Pylon) validate(profile string) error {
	if !topology.IsDNSLabel(p.Name) {
		return fmt.Errorf("name must be a DNS label")
	}
	switch p.Trust {
	case matrix.System, matrix.Bundle, matrix.SystemPlusBundle, matrix.GRPCOverride:
	default:
		return fmt.Errorf("trust %q: want %s, %s, %s or %s", p.Trust, matrix.System, matrix.Bundle, matrix.SystemPlusBundle, matrix.GRPCOverride)
	}
	// A variant may carry a deliberately bad bootstrap URL (that is what
	// fail-closed scenarios deploy); only the base Pylon is checked.
	if p.Variant == "" {
		return checkURL("bootstrap URL", p.BootstrapURL, profile)
	}
	return nil
}

// checkURL requires an explicit scheme: https, or http only in the
// insecure profile.
func checkURL(what, u, profile string) error {
	switch {
	case strings.HasPrefix(u, "https://"):
		return nil
	case strings.HasPrefix(u, "http://") && profile == "insecure":
		return nil
	case strings.HasPrefix(u, "http://"):
		return fmt.Errorf("%s %q: http is refused in the secure profile; use https://", what, u)
	default:
		return fmt.Errorf("%s %q: needs an explicit https:// scheme", what, u)
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
