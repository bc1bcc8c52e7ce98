package kubelet

import (
	"fmt"
	"os"
	"strings"
)

// resolveImage maps an image reference to a local binary: by the full
// reference, then the repository without tag or digest, then its last path
// element. The binary must exist.
func resolveImage(images map[string]string, ref string) (string, error) {
	repo := ref
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndexByte(repo, ':'); i >= 0 && !strings.Contains(repo[i:], "/") {
		repo = repo[:i]
	}
	last := repo[strings.LastIndexByte(repo, '/')+1:]
	for _, k := range []string{ref, repo, last} {
		if bin, ok := images[k]; ok {
			if st, err := os.Stat(bin); err != nil || st.IsDir() {
				return "", fmt.Errorf("image %q maps to %s, which is not a binary (build it first): %v", ref, bin, err)
			}
			return bin, nil
		}
	}
	known := make([]string, 0, len(images))
	for k := range images {
		known = append(known, k)
	}
	return "", fmt.Errorf("image %q is not mapped to a local binary (known: %s); add --image-binary %s=<path>", ref, strings.Join(known, ", "), last)
}
