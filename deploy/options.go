package deploy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/model/matrix"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
)

// FieldManager is the server-side apply field manager of every object.
const FieldManager = "nvcf-harness"

// DefaultTimeout bounds how long Apply waits for readiness.
const DefaultTimeout = 4 * time.Minute

// Options say what to deploy where.
type Options struct {
	// Kubeconfig is the path of a kubeconfig with a context per cluster.
	Kubeconfig string
	// Contexts maps a cluster name to its kubeconfig context; a cluster not
	// listed uses the context named like the cluster.
	Contexts map[string]string
	// Clients, when set for a cluster, is used instead of the kubeconfig
	// (tests, or callers that already hold clients).
	Clients map[string]kubernetes.Interface
	// Topology is the topology the clusters were brought up from.
	Topology *topology.Topology
	// PKI is the minted PKI; its Secrets and ConfigMaps are applied.
	PKI *pki.Manifest
	// Cell is the matrix cell to deploy.
	Cell matrix.Cell
	// Images of the components; empty fields mean manifests.DefaultImage.
	Images manifests.Images
	// Flavor is the shape of the rendered containers (default
	// manifests.FlavorReference; manifests.FlavorNVCF for real images).
	Flavor manifests.Flavor
	// Build is what the nvcf flavor's real components accept (nil: the
	// committed snapshot, nvcfbuild.Snapshot); see manifests.Values.Build.
	Build *nvcfbuild.Build
	// Namespace of every object (default manifests.Namespace).
	Namespace string
	// Defect switches registered defects on in one role, Pylon variants
	// included (harness selftest only; the zero value switches none).
	Defect manifests.Defect
	// BaseRefusals, when set, gives each wait for the base Pylon a fresh
	// RefusalWatch: a typed refusal of a base component ends that wait at
	// once, as the Apply's error, instead of at Timeout (nil: wait out
	// Timeout).
	BaseRefusals func() RefusalWatch
	// AuthToken is the reverse-tunnel token. Empty: keep the token of an
	// existing pylon-auth Secret, else generate one.
	AuthToken string
	// ClientTLS turns on the mutual-TLS profile of reverse QUIC: Pylon
	// presents the PKI's good client certificate and Stargate requires one
	// chaining to the custom roots.
	ClientTLS bool
	// Timeout bounds the readiness waits of one Apply (default DefaultTimeout).
	Timeout time.Duration
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// fill checks o and fills defaults; render-only callers need neither PKI
// nor clusters.
func (o *Options) fill(renderOnly bool) error {
	if o.Topology == nil {
		return errors.New("deploy: Options.Topology is nil; load the topology first")
	}
	if o.PKI == nil && !renderOnly {
		return errors.New("deploy: Options.PKI is nil; mint the PKI first (pki.Mint)")
	}
	o.Cell = o.Cell.Normalize()
	if err := o.Cell.Validate(); err != nil {
		return fmt.Errorf("deploy: cell: %w", err)
	}
	if o.Namespace == "" {
		o.Namespace = manifests.Namespace
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Kubeconfig == "" && !renderOnly {
		for _, c := range o.Topology.Clusters {
			if o.Clients[c.Name] == nil {
				return fmt.Errorf("deploy: no kubeconfig given and no client for cluster %q; set Options.Kubeconfig", c.Name)
			}
		}
	}
	return nil
}

// context returns the kubeconfig context of a cluster.
func (o *Options) context(cluster string) string {
	if c, ok := o.Contexts[cluster]; ok && c != "" {
		return c
	}
	return cluster
}

// client builds a clientset for a cluster from the kubeconfig.
func (o *Options) client(cluster string) (kubernetes.Interface, error) {
	if c := o.Clients[cluster]; c != nil {
		return c, nil
	}
	cfg, err := clusters.RESTConfig(o.Kubeconfig, o.context(cluster))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %q context %q (cluster %q): %w", o.Kubeconfig, o.context(cluster), cluster, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for cluster %q: %w", cluster, err)
	}
	return cs, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate auth token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
