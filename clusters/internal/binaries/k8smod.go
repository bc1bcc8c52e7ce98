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

// k8sTools renders the tools.go that makes the build module require the
// packages of cmds (e.g. "kubelet").
func k8sTools(cmds []string) string {
	var b strings.Builder
	b.WriteString("//go:build tools\n\npackage k8sbuild\n\nimport (\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "\t_ %q\n", "k8s.io/kubernetes/cmd/"+c)
	}
	b.WriteString(")\n")
	return b.String()
}

// writeK8sModule writes go.mod and tools.go (requiring the packages of
// cmds) unless a go.mod naming the same version is already there (go mod
// tidy then only completes it).
func writeK8sModule(dir string, v Versions, cmds []string) error {
	gomod := filepath.Join(dir, "go.mod")
	if data, err := os.ReadFile(gomod); err == nil && strings.Contains(string(data), "k8s.io/kubernetes "+v.Kubernetes) {
		return nil
	}
	if err := os.WriteFile(gomod, []byte(k8sGoMod(v)), 0o644); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrBuild, gomod, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.go"), []byte(k8sTools(cmds)), 0o644); err != nil {
		return fmt.Errorf("%w: write tools.go: %w", ErrBuild, err)
	}
	return nil
}
