package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// scenariosPackage is the package of the suite, relative to the module root.
const scenariosPackage = "./scenarios/"

// modulePath is this module's path, used to find its root.
const modulePath = "github.com/nvcf/conformance"

// suiteGrace is how long the suite may take to stop after Ctrl-C.
const suiteGrace = 30 * time.Second

// suiteTimeout bounds the whole suite (go test -timeout).
const suiteTimeout = "90m"

// runSuite runs the scenarios suite through gotestsum, writing JUnit to
// junit and the test output to out.
func runSuite(ctx context.Context, moduleDir, cfgPath, junit string, out io.Writer) error {
	args := []string{"tool", "gotestsum", "--format", "testname", "--junitfile", junit,
		"--", "-count=1", "-timeout", suiteTimeout, "-run", "^TestScenarios$", scenariosPackage,
		"-args", "-harness.run=" + cfgPath}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = moduleDir
	cmd.Stdout, cmd.Stderr = out, out
	// go, gotestsum and the test binary share a process group, so Ctrl-C
	// reaches all of them; they get suiteGrace to finish before SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = suiteGrace
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// buildReference builds the reference components' binary into bin/ of the
// module and into the cache's bin/, where the embedded provider's process
// kubelet maps the nvcf-ref image to it.
func buildReference(ctx context.Context, moduleDir string, log *slog.Logger) error {
	targets := []string{filepath.Join(moduleDir, "bin", "nvcf-ref"), filepath.Join(CacheHome(), "bin", "nvcf-ref")}
	log.Info("building the reference components", "out", targets[0])
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "build", "-o", targets[0], "./cmd/nvcf-ref")
	cmd.Dir = moduleDir
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build ./cmd/nvcf-ref: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	data, err := os.ReadFile(targets[0])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(targets[1]), 0o755); err != nil {
		return fmt.Errorf("cache folder: %w", err)
	}
	tmp := targets[1] + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return fmt.Errorf("copy nvcf-ref into the cache: %w", err)
	}
	return os.Rename(tmp, targets[1])
}

// CacheHome is $XDG_CACHE_HOME/nvcf-harness (default ~/.cache/nvcf-harness).
func CacheHome() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nvcf-harness")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "nvcf-harness")
}

// moduleDir finds the module root from the working folder upwards.
func moduleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run: not inside the " + modulePath + " module; run from the repository (make e2e)")
		}
		dir = parent
	}
}
