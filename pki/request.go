package pki

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nvcf/conformance/model/topology"
)

// Validity limits. A Request's Validity of zero means DefaultValidity.
const (
	// DefaultValidity is the lifetime of the "good" certificates.
	DefaultValidity = 30 * 24 * time.Hour
	// minValidity keeps a quarter of the window (the reuse margin) at
	// least an hour long.
	minValidity = 4 * time.Hour
	// maxValidity bounds the window at five years.
	maxValidity = 5 * 365 * 24 * time.Hour
)

// DefaultSystemRoots is where Debian keeps the system trust bundle.
const DefaultSystemRoots = "/etc/ssl/certs/ca-certificates.crt"

// Request is the plain data PKI is minted from; it knows nothing of
// topologies (the CLI converts one into a Request).
type Request struct {
	// Clusters that serve TLS: each gets an ingress and a QUIC relay
	// certificate family.
	Clusters []ClusterNames `json:"clusters,omitempty"`
	// Clients are the identities of reverse-QUIC mutual-TLS clients, at
	// most one per cluster.
	Clients []ClientIdentity `json:"clients,omitempty"`
	// Validity of the good certificates (zero: DefaultValidity; between
	// 4 h and five years).
	Validity time.Duration `json:"validity"`
	// Intermediate puts an intermediate CA between the trusted root and
	// every leaf it issues.
	Intermediate bool `json:"intermediate,omitempty"`
	// SystemRoots is the system trust bundle merged into
	// nvcf-ca-bundle.pem ("" means DefaultSystemRoots). When the file does
	// not exist the merged bundle holds the custom root alone and the
	// manifest records the system roots as absent.
	SystemRoots string `json:"systemRoots,omitempty"`
}

// ClusterNames are the names one server cluster is reached by.
type ClusterNames struct {
	// Name is the cluster's name, a DNS label.
	Name string `json:"name"`
	// DialHosts are the external hostnames of the TLS ingress (gRPC, then
	// HTTP); the first is the intended verification name. No wildcards.
	DialHosts []string `json:"dialHosts"`
	// Authorities are the names clients carry as HTTP/2 :authority through
	// the ingress, such as the identity wildcard (wildcards allowed). TLS
	// verifies the dial host and never these, so the good ingress
	// certificate does not cover them, and ServerIdentityOnly covers them
	// alone. None may cover a dial host.
	Authorities []string `json:"authorities,omitempty"`
	// QUICNames are the SNI names of the QUIC relay (per-pod identities,
	// wildcards such as "*.sg.region-a.nvcf.test" allowed).
	QUICNames []string `json:"quicNames"`
}

// ClientIdentity is one mutual-TLS client.
type ClientIdentity struct {
	// Cluster the client runs in (a DNS label); it keys the manifest.
	Cluster string `json:"cluster"`
	// Name is the client's DNS name, used as CN and SAN.
	Name string `json:"name"`
}

// formatTag versions the folder layout and is part of the input hash: bump
// it whenever Mint's output changes, so that old folders are re-minted.
const formatTag = "nvcf-pki/v4"

// normalized returns a copy with defaults filled in and names lower-cased.
func (r Request) normalized() Request {
	out := r
	if out.Validity == 0 {
		out.Validity = DefaultValidity
	}
	if out.SystemRoots == "" {
		out.SystemRoots = DefaultSystemRoots
	}
	out.Clusters = make([]ClusterNames, len(r.Clusters))
	for i, c := range r.Clusters {
		out.Clusters[i] = ClusterNames{Name: c.Name, DialHosts: lower(c.DialHosts), Authorities: lower(c.Authorities), QUICNames: lower(c.QUICNames)}
	}
	out.Clients = make([]ClientIdentity, len(r.Clients))
	for i, c := range r.Clients {
		out.Clients[i] = ClientIdentity{Cluster: c.Cluster, Name: strings.ToLower(c.Name)}
	}
	return out
}

func lower(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(strings.TrimSuffix(s, "."))
	}
	return out
}

// Validate reports the first bad input, naming it and the fix.
func (r Request) Validate() error {
	n := r.normalized()
	switch {
	case n.Validity < 0:
		return fmt.Errorf("validity %v: negative; give a positive duration such as 720h", r.Validity)
	case n.Validity < minValidity:
		return fmt.Errorf("validity %v: shorter than the minimum %v (certificates would need re-minting within the run)", r.Validity, minValidity)
	case n.Validity > maxValidity:
		return fmt.Errorf("validity %v: longer than the maximum %v", r.Validity, maxValidity)
	}
	if len(n.Clusters) == 0 && len(n.Clients) == 0 {
		return fmt.Errorf("request: no clusters and no clients; name at least one cluster with its dial hosts")
	}
	seen := map[string]bool{}
	for i, c := range n.Clusters {
		where := fmt.Sprintf("clusters[%d] %q", i, c.Name)
		if !topology.IsDNSLabel(c.Name) {
			return fmt.Errorf("%s: name must be a DNS label (a-z, 0-9, '-')", where)
		}
		if seen[c.Name] {
			return fmt.Errorf("%s: named twice", where)
		}
		seen[c.Name] = true
		if err := checkNames(where+" dialHosts", c.DialHosts, false, true); err != nil {
			return err
		}
		if err := checkNames(where+" authorities", c.Authorities, true, false); err != nil {
			return err
		}
		for j, a := range c.Authorities {
			for _, h := range c.DialHosts {
				if covers(a, h) {
					return fmt.Errorf("%s authorities[%d] %q: covers the dial host %q; authorities are the :authority names TLS must not verify, so they must not cover a dial host", where, j, a, h)
				}
			}
		}
		if err := checkNames(where+" quicNames", c.QUICNames, true, true); err != nil {
			return err
		}
	}
	clients := map[string]bool{}
	for i, c := range n.Clients {
		where := fmt.Sprintf("clients[%d]", i)
		if !topology.IsDNSLabel(c.Cluster) {
			return fmt.Errorf("%s: cluster %q must be a DNS label (a-z, 0-9, '-')", where, c.Cluster)
		}
		if clients[c.Cluster] {
			return fmt.Errorf("%s: cluster %q already has a client identity; give one per cluster", where, c.Cluster)
		}
		clients[c.Cluster] = true
		if err := checkNames(where+" name", []string{c.Name}, false, true); err != nil {
			return err
		}
	}
	return nil
}

func checkNames(where string, names []string, wildcard, required bool) error {
	if required && len(names) == 0 {
		return fmt.Errorf("%s: empty; give at least one DNS name", where)
	}
	for i, name := range names {
		if err := checkDNSName(name, wildcard); err != nil {
			return fmt.Errorf("%s[%d] %q: %w", where, i, name, err)
		}
	}
	return nil
}

func checkDNSName(name string, wildcard bool) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > 253 {
		return fmt.Errorf("longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return fmt.Errorf("not a fully qualified name (want at least two labels, e.g. host.example.test)")
	}
	for i, l := range labels {
		if l == "*" && i == 0 && wildcard {
			if len(labels) < 3 {
				return fmt.Errorf("wildcard needs at least two labels after '*'")
			}
			continue
		}
		if l == "*" || strings.Contains(l, "*") {
			if !wildcard {
				return fmt.Errorf("wildcards are not allowed here; give the concrete hostname")
			}
			return fmt.Errorf("a wildcard may only be the whole leftmost label (\"*.zone\")")
		}
		if !topology.IsDNSLabel(l) {
			return fmt.Errorf("label %q is not a DNS label (a-z, 0-9, '-', at most 63, no leading or trailing '-')", l)
		}
	}
	return nil
}

// inputHash identifies the inputs of a mint: the normalized request and
// the content of the system roots it merges.
func inputHash(r Request, systemRootsSHA string) string {
	doc, _ := json.Marshal(struct {
		Format      string  `json:"format"`
		Request     Request `json:"request"`
		SystemRoots string  `json:"systemRootsSHA256"`
	}{formatTag, r, systemRootsSHA})
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:])
}
