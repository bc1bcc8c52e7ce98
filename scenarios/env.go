package scenarios

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/pki"
	"github.com/nvcf/conformance/scenarios/probe"
)

// Env is what one case sees: the World, the deployment of its cell, its own
// prober (whose transcript becomes the case's evidence) and its evidence
// folder. Steps reach clusters, targets and observations through its
// methods, never through values fished out of a context.
type Env struct {
	*World
	// Deployed is the deployment of the case's cell.
	Deployed *deploy.Result
	// Probe is the case's prober.
	Probe *probe.Prober
	// Evidence is the case's evidence folder.
	Evidence string

	mu     sync.Mutex
	faults []string
	// proofs are the server-side checks made, each with its proof level.
	proofs []string
	// mustAnswer names the not-ready or terminating Stargate pods
	// ("region/pod") that every server-side sweep must ask while a case
	// holds them (askedThrough); another not-ready pod that does not
	// answer, or another terminating one, is left out.
	mustAnswer []string
}

// Regions are the stargate clusters, in topology order.
func (e *Env) Regions() []string {
	var out []string
	for _, c := range e.Topology.ByRole(topology.RoleStargate) {
		out = append(out, c.Name)
	}
	return out
}

// Workers is the first workers cluster.
func (e *Env) Workers() string {
	w := e.Topology.ByRole(topology.RoleWorkers)
	if len(w) == 0 {
		return ""
	}
	return w[0].Name
}

// Bootstrap is the region the base Pylon bootstraps from.
func (e *Env) Bootstrap() string { return e.Deployed.BootstrapCluster }

// Trusted is the TLS setting of a probe that trusts the environment's root
// and verifies name.
func (e *Env) Trusted(name string) probe.TLS { return probe.TLS{Roots: e.roots, ServerName: name} }

// WrongRoot is the TLS setting of a probe that trusts only the wrong root.
func (e *Env) WrongRoot(name string) probe.TLS { return probe.TLS{Roots: e.wrong, ServerName: name} }

// Ingress is the gRPC target of a region's TLS ingress, verified, with
// the dial address as :authority (a scenario sets Authority) and the
// deployment's worker token for registrations (the worker-auth gateway
// knows it).
func (e *Env) Ingress(region string) probe.GRPCTarget {
	host := e.Topology.GRPCHost(region)
	return probe.GRPCTarget{Addr: net.JoinHostPort(host, strconv.Itoa(manifests.GRPCPort)), TLS: e.Trusted(host), Token: e.Deployed.AuthToken}
}

// Identity renders the Stargate identity of pod in region.
func (e *Env) Identity(region, pod string) string { return e.Topology.Identity(region, pod) }

// QUIC is the reverse-tunnel target of a region's QUIC relay for the
// Stargate pod, with the deployment's token and no client certificate.
func (e *Env) QUIC(region, pod, serverID string) probe.QUICTarget {
	id := e.Identity(region, pod)
	return probe.QUICTarget{
		Addr:              net.JoinHostPort(e.Topology.QUICHost(region), strconv.Itoa(manifests.QUICPort)),
		TLS:               e.Trusted(id),
		InferenceServerID: serverID,
		Token:             e.Deployed.AuthToken,
	}
}

// ClientCert loads a reverse-QUIC client certificate of the workers
// cluster (pki.ClientGood, pki.ClientWrongRoot, …).
func (e *Env) ClientCert(p pki.Purpose) (tls.Certificate, error) {
	c, err := e.PKI.Credential(pki.RoleClient, p, e.Workers())
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(c.CertPath, c.KeyPath)
}

// Invoke is the HTTP target of a region's Stargate HTTP (plaintext port
// 8000 behind its load balancer, as the manifests deploy it).
func (e *Env) Invoke(region string) probe.HTTPTarget {
	return probe.HTTPTarget{URL: "http://" + net.JoinHostPort(e.Topology.HTTPHost(region), strconv.Itoa(manifests.HTTPPort))}
}

// Roots returns the pool of the trusted roots (both TLS planes').
func (e *Env) Roots() *x509.CertPool { return e.roots }

// Within returns ctx bounded by d scaled by the run's time scale.
func (e *Env) Within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.Scale(d))
}

// Eventually calls check until it returns nil or the deadline (d, scaled)
// passes; the error then says what was waited for and the last failure.
// It waits on a condition, polling every 250 ms; it never sleeps to
// synchronise.
func (e *Env) Eventually(ctx context.Context, what string, d time.Duration, check func(context.Context) error) error {
	ctx, cancel := e.Within(ctx, d)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		// A check cut short by the deadline (or refused by a client's rate
		// limiter because the deadline is near) says less than the one
		// before it.
		if last == nil || !nearDeadline(ctx) {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited %s for %s: %w", e.Scale(d), what, last)
		case <-tick.C:
		}
	}
}

// nearDeadline reports whether ctx is done or within a poll of its deadline.
func nearDeadline(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && time.Until(dl) < time.Second
}

// NoteFault records a fault active during the case, for its report.
func (e *Env) NoteFault(desc string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Contains(e.faults, desc) {
		e.faults = append(e.faults, desc)
	}
}

// Faults lists the faults recorded during the case.
func (e *Env) Faults() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.faults)
}
