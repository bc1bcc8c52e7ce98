package local_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/clusters/kind"
	"github.com/nvcf/conformance/clusters/local/internal/controlplane"
	"github.com/nvcf/conformance/clusters/local/internal/plan"
)

// Both providers' CoreDNS come from the one renderer (clusters/internal/
// corefile), so a DNS fault acts the same on both: the external domain's
// block is the same but for where each listens and where its external DNS
// is, and neither caches anything.
func TestProvidersShareOneCorefilePolicy(t *testing.T) {
	c := plan.For(1, "region-b")
	embedded := controlplane.Corefile(c, "/s/kubeconfig", "nvcf.test")
	kindCF := kind.Corefile("nvcf.test")
	for name, cf := range map[string]string{"embedded": embedded, "kind": kindCF} {
		require.NotContains(t, cf, "cache", "%s caches: a DNS fault would wait out the TTL", name)
	}
	norm := func(cf, bind, dns string) string {
		b := serverBlock(t, cf, "nvcf.test:53")
		if bind != "" {
			b = strings.ReplaceAll(b, "    bind "+bind+"\n", "")
		}
		return strings.ReplaceAll(b, dns, "EXTERNAL-DNS")
	}
	require.Equal(t,
		norm(kindCF, "", kind.ExternalDNS.String()),
		norm(embedded, c.BridgeIP().String(), c.Env.ExternalDNS().String()))
	require.Equal(t,
		serverBlock(t, kindCF, ".:53"),
		strings.ReplaceAll(serverBlock(t, embedded, ".:53"), "    bind "+c.BridgeIP().String()+"\n", ""))
}

// serverBlock is the body of the Corefile's server block that opens with key.
func serverBlock(t *testing.T, corefile, key string) string {
	t.Helper()
	for _, part := range strings.Split(corefile, "\n}\n") {
		if strings.HasPrefix(strings.TrimSpace(part), key+" {") {
			return part
		}
	}
	t.Fatalf("no server block %q in\n%s", key, corefile)
	return ""
}
