package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// The files `make build` puts in bin/ beside the harness; a run needs them
// and nothing else (no Go toolchain, no source tree).
const (
	// SuiteBinary is the compiled scenario suite (go test -c ./scenarios).
	SuiteBinary = "scenarios.test"
	// ReferenceBinary is the reference components' multi-role binary.
	ReferenceBinary = "nvcf-ref"
	// test2json and gotestsum turn the suite's output into JUnit.
	test2jsonBinary = "test2json"
	gotestsumBinary = "gotestsum"
)

// suitePackage names the suite in JUnit, as `go test` would.
const suitePackage = "github.com/nvcf/conformance/scenarios"

// suiteGrace is how long the suite may take to stop after Ctrl-C.
const suiteGrace = 30 * time.Second

// suiteTimeout bounds the whole suite (the test binary's -test.timeout).
const suiteTimeout = "90m"

// BinDir is the folder of the running executable, where `make build` puts
// the suite and the reference binary beside the harness.
func BinDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate the harness executable: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("locate the harness executable: %w", err)
	}
	return filepath.Dir(exe), nil
}

// checkBundle reports which of the files a run needs are missing from dir.
func checkBundle(dir string) error {
	var missing []string
	for _, f := range []string{SuiteBinary, ReferenceBinary, test2jsonBinary, gotestsumBinary} {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f)
		} else if err != nil {
			return fmt.Errorf("bin folder %s: %w", dir, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("bin folder %s lacks %s; build them with `make build` (or copy the whole bin/ folder)", dir, strings.Join(missing, ", "))
	}
	return nil
}

// runSuite runs the compiled suite through test2json and gotestsum, writing
// gotestsum's JUnit (a testcase per test and step) to junit and the test
// output, as `go test -v` prints it, to out. The suite runs in workDir,
// with procEnv (the environment's clusters.Environment.ProcessEnv) added to
// its variables, so that a suite whose run was killed is stopped by the
// environment's down instead of outliving it.
func runSuite(ctx context.Context, binDir, workDir, cfgPath, junit string, procEnv []string, out io.Writer) error {
	return runSuiteTest(ctx, binDir, workDir, cfgPath, junit, "TestScenarios", procEnv, out)
}

// runSuiteTest is runSuite for one named test of the suite (TestScenarios,
// TestCampaign).
func runSuiteTest(ctx context.Context, binDir, workDir, cfgPath, junit, test string, procEnv []string, out io.Writer) error {
	bin := func(name string) string { return filepath.Join(binDir, name) }
	args := []string{"--format", "standard-verbose", "--junitfile", junit, "--raw-command", "--",
		bin(test2jsonBinary), "-t", "-p", suitePackage, bin(SuiteBinary), "-test.v=test2json",
		"-test.count=1", "-test.timeout=" + suiteTimeout, "-test.run=^" + test + "$", "-harness.run=" + cfgPath}
	cmd := exec.CommandContext(ctx, bin(gotestsumBinary), args...)
	cmd.Dir = workDir
	cmd.Stdout, cmd.Stderr = out, out
	// gotestsum, test2json and the suite share a process group, so Ctrl-C
	// reaches all of them; they get suiteGrace to finish before SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = suiteGrace
	// gotestsum asks `go version` for JUnit unless told; there may be no Go.
	cmd.Env = append(append(os.Environ(), "GOVERSION="+runtime.Version()), procEnv...)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scenario suite (%s): %w", bin(SuiteBinary), err)
	}
	return nil
}
