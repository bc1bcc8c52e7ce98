package clusters

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheHomeHonoursXDG(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x")
	require.Equal(t, "/x/nvcf-harness", CacheHome())
	t.Setenv("XDG_CACHE_HOME", "")
	require.True(t, strings.HasSuffix(CacheHome(), "/.cache/nvcf-harness"))
}
