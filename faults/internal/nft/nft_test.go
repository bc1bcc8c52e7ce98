package nft

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAddDeleteByComment(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("%v; skipped", err)
	}
	ns := "nvcft-nft-unit"
	_ = exec.Command("ip", "netns", "del", ns).Run()
	require.NoError(t, exec.Command("ip", "netns", "add", ns).Run())
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ctx := context.Background()

	c, err := Comments(ctx, ns)
	require.NoError(t, err)
	require.Nil(t, c, "no table yet")
	require.NoError(t, Add(ctx, ns, "nvcf-fault:a", []Rule{{Input, "ip saddr 198.18.210.0/24 drop"}, {Output, "ip daddr 198.18.210.0/24 drop"}}))
	require.NoError(t, Add(ctx, ns, "nvcf-fault:b", []Rule{{Forward, "ip saddr 198.18.211.0/24 drop"}}))
	c, err = Comments(ctx, ns)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"nvcf-fault:a", "nvcf-fault:a", "nvcf-fault:b"}, c)

	require.NoError(t, Delete(ctx, ns, "nvcf-fault:a"))
	c, err = Comments(ctx, ns)
	require.NoError(t, err)
	require.Equal(t, []string{"nvcf-fault:b"}, c)
	require.NoError(t, Delete(ctx, ns, "nvcf-fault:b"))
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "tables").Output()
	require.NoError(t, err)
	require.NotContains(t, string(out), Table, "the last delete removes the table")
	require.NoError(t, Delete(ctx, ns, "nvcf-fault:b"), "deleting again is not an error")

	require.ErrorContains(t, Add(ctx, ns, `x" drop`, nil), "quotes")
	err = Add(ctx, ns, "nvcf-fault:c", []Rule{{Input, "ip saddr nonsense drop"}})
	require.ErrorContains(t, err, "nft -f -")
}
