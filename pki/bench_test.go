package pki_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nvcf/conformance/pki"
)

// BenchmarkMintThreeClusters mints the default topology's whole PKI (two
// stargate clusters, one workers cluster: 33 keys and certificates, 5
// bundles, 31 Secrets, 4 ConfigMaps) into a fresh folder each time.
func BenchmarkMintThreeClusters(b *testing.B) {
	req := defaultRequest(b)
	base := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		if _, err := pki.Mint(context.Background(), req, filepath.Join(base, fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
	}
}
