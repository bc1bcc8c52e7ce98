package clusters

import (
	"os"
	"path/filepath"
)

// StateHome is where environments and their runs keep state:
// $XDG_STATE_HOME/nvcf-harness (default ~/.local/state/nvcf-harness).
func StateHome() string { return xdgHome("XDG_STATE_HOME", ".local/state") }

// CacheHome is where expensive builds are cached (the control-plane
// binaries): $XDG_CACHE_HOME/nvcf-harness (default ~/.cache/nvcf-harness).
func CacheHome() string { return xdgHome("XDG_CACHE_HOME", ".cache") }

func xdgHome(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, "nvcf-harness")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, fallback, "nvcf-harness")
}
