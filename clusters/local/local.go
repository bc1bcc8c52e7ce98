package local

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"

	"github.com/nvcf/conformance/clusters/internal/binaries"
	"github.com/nvcf/conformance/clusters/internal/podnet"
	"github.com/nvcf/conformance/clusters/local/internal/agent"
)

// RunAgent runs the agent of the environment whose state folder is dir
// until ctx is done (SIGTERM), then tears it down.
func RunAgent(ctx context.Context, dir string, log *slog.Logger) error {
	return agent.Run(ctx, dir, agent.Hooks{Node: runNode, LB: runLB}, log)
}

// Binaries are the paths of the control-plane binaries.
type Binaries = binaries.Set

// BinarySources are the base URLs of the pinned release artifacts.
type BinarySources = binaries.Sources

// EnsureBinaries fills the cache with whichever control-plane binaries it
// lacks: downloaded and checked against the published SHA-256 when the
// release hosts answer, else built from source (about 15 minutes cold on 2
// cores). It prints progress to progress and returns their paths.
func EnsureBinaries(ctx context.Context, progress io.Writer) (*Binaries, error) {
	return binaries.Ensure(ctx, binaries.Options{Progress: progress})
}

// EnsureKubectl is EnsureBinaries for the kubectl of the same Kubernetes
// version, for looking inside the clusters; no cluster needs it, so the
// control plane's cold build does not wait for it (about a minute more
// after it). It returns kubectl's path.
func EnsureKubectl(ctx context.Context, progress io.Writer) (string, error) {
	return binaries.EnsureKubectl(ctx, binaries.Options{Progress: progress})
}

// Purge removes every process and network object of the embedded provider
// on this machine, whichever run made it: every process carrying the
// marker (NVCF_HARNESS_ENV in its environment), network namespaces nvcf-*,
// links nvcfbr*/nvcfv*, the nftables tables inet nvcf_harness and inet
// nvcf_faults, and the harness's addresses on lo. `harness down --purge`.
func Purge(ctx context.Context, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := podnet.RequireRoot(); err != nil {
		return err
	}
	_, err := purgeProcesses(ctx, log)
	return errors.Join(err, podnet.Cleanup(ctx, log))
}

// Versions are the pinned control-plane versions the provider runs.
func Versions() (kubernetes, etcd, coredns string) {
	return binaries.Pinned.Kubernetes, binaries.Pinned.Etcd, binaries.Pinned.CoreDNS
}

// BinariesReady reports whether the cache holds every control-plane binary
// already (EnsureBinaries would neither download nor build): root tests
// that bring clusters up skip without them rather than start a cold build.
func BinariesReady() bool { return binaries.Ready(binaries.Options{}) }

// GuardActive reports whether the embedded provider's nftables guard
// (table inet nvcf_harness) is installed, that is whether an embedded
// environment is up: while it is, the host forwards and sends traffic of
// the test range only between the embedded bridges, so other users of the
// range (the kind provider's Docker network) are cut off.
func GuardActive(ctx context.Context) bool {
	return exec.CommandContext(ctx, "nft", "list", "table", "inet", podnet.HarnessTable).Run() == nil
}
