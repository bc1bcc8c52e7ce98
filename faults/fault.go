package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nvcf/conformance/faults/internal/journal"
)

// Kind names a family of faults.
type Kind string

// The kinds of faults.
const (
	kindTCP       Kind = "tcp"         // toxics on TCP connections over a path
	kindUDP       Kind = "udp"         // impairments of UDP datagrams over a path
	kindPartition Kind = "partition"   // drop everything between two clusters
	kindPodDelete Kind = "pod-delete"  // delete pods through the API
	kindPodCrash  Kind = "pod-crash"   // kill pods' processes behind the API's back
	kindScale     Kind = "scale"       // change a workload's replicas
	kindCert      Kind = "cert-rotate" // replace a TLS Secret's certificate
	kindDNS       Kind = "dns"         // answer an external name wrongly
	kindDowngrade Kind = "downgrade"   // answer TLS clients in plaintext
)

// Target says what a fault hits, for people and reports; the Action holds
// the concrete addresses and objects.
type Target struct {
	// Cluster hit by pod, certificate and DNS faults.
	Cluster string `json:"cluster,omitempty"`
	// From and To: the clusters at both ends of a path.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Service: a Service, Secret, workload or address, e.g. "nvcf/stargate-ingress".
	Service string `json:"service,omitempty"`
	// Pods: a pod name or label selector.
	Pods string `json:"pods,omitempty"`
}

// String renders the target as "from->to service", "cluster/pods" and so on.
func (t Target) String() string {
	var parts []string
	if t.From != "" || t.To != "" {
		parts = append(parts, t.From+"->"+t.To)
	}
	if t.Cluster != "" {
		parts = append(parts, t.Cluster)
	}
	if t.Service != "" {
		parts = append(parts, t.Service)
	}
	if t.Pods != "" {
		parts = append(parts, "pods="+t.Pods)
	}
	return strings.Join(parts, " ")
}

// undoFunc reverts an injected fault. It must be safe to call once, also with
// a context whose parent has ended.
type undoFunc func(ctx context.Context) error

// Action is what a fault does: one of the typed actions of this package
// (UDPFault, CertRotate, DNSFault, Downgrade, PartitionBetween's; FromParams
// builds every kind, also TCP toxics, pod deletes and crashes, scaling).
type Action interface {
	// Kind is the action's family.
	Kind() Kind
	// Describe summarises the parameters for reports.
	Describe() string
	inject(ctx context.Context, e *env) (undoFunc, error)
}

// Fault is one declarative, time-bounded fault.
type Fault struct {
	// Name is a short human name (default: the kind).
	Name string
	// Target is what the fault hits, as reports name it.
	Target Target
	// Action injects the fault and returns its undo.
	Action Action
	// Start delays the injection after Start is called.
	Start time.Duration
	// Duration is how long the fault stays; 0 means until the context ends
	// or Stop is called.
	Duration time.Duration
}

// Kind is the fault's action kind.
func (f Fault) Kind() Kind {
	if f.Action == nil {
		return ""
	}
	return f.Action.Kind()
}

func (f Fault) name() string {
	if f.Name != "" {
		return f.Name
	}
	return string(f.Kind())
}

// inject applies the fault now, without recording or journaling it, and
// returns its undo. Prefer run or Start, which always undo.
func (f Fault) inject(ctx context.Context) (undoFunc, error) {
	if f.Action == nil {
		return nil, fmt.Errorf("fault %q has no Action", f.Name)
	}
	return f.Action.inject(ctx, &env{id: newID(f.Kind()), log: slog.New(slog.DiscardHandler)})
}

// env is what an action gets from the wrapper.
type env struct {
	id      string
	log     *slog.Logger
	journal *journal.Journal
	entry   journal.Entry

	mu      sync.Mutex
	summary []string
	// accepted counts clients that went on over the fault's hostile
	// channel (Handle.Accepted).
	accepted uint64
}

func (e *env) setAccepted(n uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accepted = n
}

// note adds a line to what the fault did (packets dropped, datagrams
// lost, clients served), which its Record carries after the undo.
func (e *env) note(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.summary = append(e.summary, fmt.Sprintf(format, args...))
}

func (e *env) result() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.summary, "; ")
}

// comment is the nftables comment of this fault's rules.
func (e *env) comment() string { return "nvcf-fault:" + e.id }

// persist journals what a later process needs to undo this fault; actions
// call it before they change anything that outlives the process.
func (e *env) persist(c journal.Cleanup) error {
	if e.journal == nil {
		return nil
	}
	if c.NFT != nil {
		e.entry.Cleanup.NFT = c.NFT
	}
	if c.Secret != nil {
		e.entry.Cleanup.Secret = c.Secret
	}
	if c.Scale != nil {
		e.entry.Cleanup.Scale = c.Scale
	}
	if err := e.journal.Put(e.entry); err != nil {
		return fmt.Errorf("journal fault %s: %w", e.id, err)
	}
	return nil
}

func newID(k Kind) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return string(k) + "-" + hex.EncodeToString(b)
}
