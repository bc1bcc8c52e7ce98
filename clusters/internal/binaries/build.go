package binaries

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"
)

// goCommand finds the go tool: on PATH, else the machine's /usr/local/go.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// runGo runs `go args…` in dir with extra environment, its output appended
// to <dir>/build.log, printing a heartbeat line to the progress writer
// until it ends. The build runs at lower CPU priority so that the machine
// stays usable.
func runGo(ctx context.Context, o Options, what, dir string, env []string, args ...string) error {
	logPath := filepath.Join(dir, "build.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBuild, what, err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ go %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, o.Go, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %s: start %s: %w", ErrBuild, what, o.Go, err)
	}
	_ = syscall.Setpriority(syscall.PRIO_PGRP, cmd.Process.Pid, 10)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(o.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			rc := 0
			if err != nil {
				rc = 1
			}
			fmt.Fprintf(logf, "done %d\n", rc)
			if err != nil {
				return fmt.Errorf("%w: %s: go %s: %w (see %s)", ErrBuild, what, args[0], err, logPath)
			}
			return nil
		case <-tick.C:
			fmt.Fprintf(o.Progress, "  … still building %s (%s elapsed)\n", what, time.Since(start).Round(time.Second))
		}
	}
}

func buildKubernetes(ctx context.Context, o Options, c component) error {
	if err := writeK8sModule(c.dir, o.Versions, binNames(c)); err != nil {
		return err
	}
	aligned, err := alignModule(ctx, o, c)
	if err != nil {
		return err
	}
	err = tidyAndBuild(ctx, o, c)
	if err == nil || !aligned {
		return err
	}
	// Newer versions of a shared module broke the build (a harness
	// dependency bumped past what this Kubernetes compiles with): build
	// with Kubernetes' own versions, compiling the shared packages again.
	fmt.Fprintf(o.Progress, "the build with the harness's module versions failed (%v); building with Kubernetes' own instead\n", err)
	if err := os.Remove(filepath.Join(c.dir, "go.mod")); err != nil {
		return fmt.Errorf("%w: %w", ErrBuild, err)
	}
	if err := writeK8sModule(c.dir, o.Versions, binNames(c)); err != nil {
		return err
	}
	return tidyAndBuild(ctx, o, c)
}

// k8sEnv is the environment of the control plane's build: no cgo, as
// upstream builds these binaries and as `make build` builds bin/ (with
// -trimpath like here), so the packages both compile are compiled once.
var k8sEnv = []string{"CGO_ENABLED=0"}

func tidyAndBuild(ctx context.Context, o Options, c component) error {
	if err := runGo(ctx, o, "the Kubernetes module graph", c.dir, k8sEnv, "mod", "tidy"); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", "bin/"}
	for _, b := range c.bins {
		args = append(args, "k8s.io/kubernetes/cmd/"+filepath.Base(b))
	}
	return runGo(ctx, o, strings.Join(binNames(c), ", "), c.dir, k8sEnv, args...)
}

// alignModule raises, in c's build module, every module the running
// program was built with to at least that program's version (Go keeps the
// higher of two requirements). The harness and the control plane share
// about half of the control plane's packages (client-go, the API types,
// the API server library, gRPC, protobuf); built from the same module
// versions with the same flags, the Go build cache compiles them once, and
// `make ready`, which builds the harness first, saves that much of the
// cold build. It reports whether it required anything.
func alignModule(ctx context.Context, o Options, c component) (bool, error) {
	mods := o.alignWith
	if mods == nil {
		if bi, ok := debug.ReadBuildInfo(); ok {
			mods = bi.Deps
		}
	}
	args := []string{"mod", "edit"}
	for _, m := range mods {
		if m.Replace != nil || !strings.HasPrefix(m.Version, "v") || slices.Contains(staging, strings.TrimPrefix(m.Path, "k8s.io/")) {
			continue // replaced here or there, or not a release
		}
		if strings.HasPrefix(m.Path, "go.etcd.io/") {
			continue // the API server's etcd client stays the one it ships with, for the etcd it talks to
		}
		args = append(args, "-require="+m.Path+"@"+m.Version)
	}
	if len(args) == 2 {
		return false, nil
	}
	fmt.Fprintf(o.Progress, "aligning the Kubernetes build with the harness's versions of %d modules, to share their compiled packages\n", len(args)-2)
	return true, runGo(ctx, o, "aligning the Kubernetes module graph", c.dir, nil, args...)
}

// buildEtcd builds etcd through a module of its own: `go install
// go.etcd.io/etcd/server/v3@…` refuses, since that module's go.mod has
// replace directives.
func buildEtcd(ctx context.Context, o Options, c component) error {
	gomod := fmt.Sprintf("module nvcfharness.local/etcdbuild\n\ngo 1.26.0\n\nrequire %s %s\n", c.module, c.version)
	tools := fmt.Sprintf("//go:build tools\n\npackage etcdbuild\n\nimport _ %q\n", c.module)
	for name, data := range map[string]string{"go.mod": gomod, "tools.go": tools} {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("%w: write %s: %w", ErrBuild, name, err)
		}
	}
	if err := runGo(ctx, o, "the etcd module graph", c.dir, nil, "mod", "tidy"); err != nil {
		return err
	}
	return runGo(ctx, o, "etcd", c.dir, nil, "build", "-trimpath", "-ldflags=-s -w", "-o", c.bins[0], c.module)
}

// corednsPlugins are the plugins a source build of CoreDNS links, in
// CoreDNS's own directive order (core/dnsserver/zdirectives.go): those of
// the embedded clusters' Corefile (bind, errors, cache, template,
// kubernetes, forward) and of the Corefile kubeadm writes for a node
// image's cluster DNS (health, ready, prometheus, loop, reload,
// loadbalance). The stock build links about sixty plugins and their cloud
// SDKs: about 4.5 min cold on 2 cores, where this takes about 1.5.
var corednsPlugins = []string{
	"reload", "bind", "ready", "health", "prometheus", "errors", "cache",
	"template", "loadbalance", "kubernetes", "forward", "loop",
}

// corednsMain renders the build module's main package: CoreDNS's own
// coremain with the plugins above and their order.
func corednsMain() string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"github.com/coredns/coredns/core/dnsserver\"\n\t\"github.com/coredns/coredns/coremain\"\n")
	for _, p := range corednsPlugins {
		pkg := "plugin/" + p
		if p == "prometheus" {
			pkg = "plugin/metrics" // the directive's package
		}
		fmt.Fprintf(&b, "\t_ \"github.com/coredns/coredns/%s\"\n", pkg)
	}
	fmt.Fprintf(&b, ")\n\nfunc init() { dnsserver.Directives = []string{%q", corednsPlugins[0])
	for _, p := range corednsPlugins[1:] {
		fmt.Fprintf(&b, ", %q", p)
	}
	b.WriteString("} }\n\nfunc main() { coremain.Run() }\n")
	return b.String()
}

// buildCoreDNS builds CoreDNS at the pinned version through a module of its
// own whose main links only corednsPlugins.
func buildCoreDNS(ctx context.Context, o Options, c component) error {
	gomod := fmt.Sprintf("module nvcfharness.local/corednsbuild\n\ngo 1.26.0\n\nrequire %s %s\n", c.module, c.version)
	for name, data := range map[string]string{"go.mod": gomod, "main.go": corednsMain()} {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(data), 0o644); err != nil {
			return fmt.Errorf("%w: write %s: %w", ErrBuild, name, err)
		}
	}
	if err := runGo(ctx, o, "the CoreDNS module graph", c.dir, nil, "mod", "tidy"); err != nil {
		return err
	}
	return runGo(ctx, o, "coredns", c.dir, nil, "build", "-trimpath", "-ldflags=-s -w", "-o", c.bins[0], ".")
}
