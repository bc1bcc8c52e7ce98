package binaries

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// staging lists the k8s.io modules that k8s.io/kubernetes requires at
// v0.0.0 (they live in its staging/ folder); a module that builds it must
// replace each by its published release.
var staging = []string{
	"api", "apiextensions-apiserver", "apimachinery", "apiserver", "cli-runtime", "client-go",
	"cloud-provider", "cluster-bootstrap", "code-generator", "component-base", "component-helpers",
	"controller-manager", "cri-api", "cri-client", "cri-streaming", "csi-translation-lib",
	"dynamic-resource-allocation", "endpointslice", "externaljwt", "kms", "kube-aggregator",
	"kube-controller-manager", "kube-proxy", "kube-scheduler", "kubectl", "kubelet", "metrics",
	"mount-utils", "pod-security-admission", "sample-apiserver", "sample-cli-plugin",
	"sample-controller", "streaming",
}

// k8sGoMod renders the go.mod of the build module.
func k8sGoMod(v Versions) string {
	var b strings.Builder
	b.WriteString("module nvcfharness.local/k8sbuild\n\ngo 1.26.0\n\n")
	fmt.Fprintf(&b, "require k8s.io/kubernetes %s\n\nreplace (\n", v.Kubernetes)
	for _, m := range staging {
		fmt.Fprintf(&b, "\tk8s.io/%s => k8s.io/%s %s\n", m, m, v.Staging)
	}
	b.WriteString(")\n")
	return b.String()
}

const k8sTools = `//go:build tools

package k8sbuild

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
`

// writeK8sModule writes go.mod and tools.go unless a go.mod naming the same
// version is already there (go mod tidy then only completes it).
func writeK8sModule(dir string, v Versions) error {
	gomod := filepath.Join(dir, "go.mod")
	if data, err := os.ReadFile(gomod); err == nil && strings.Contains(string(data), "k8s.io/kubernetes "+v.Kubernetes) {
		return nil
	}
	if err := os.WriteFile(gomod, []byte(k8sGoMod(v)), 0o644); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrBuild, gomod, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(k8sTools), 0o644); err != nil {
		return fmt.Errorf("%w: write tools.go: %w", ErrBuild, err)
	}
	return nil
}
