package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/clusters/dockerd"
	harnessrun "github.com/nvcf/conformance/harness/run"
)

// runDocker is `harness docker -- COMMAND…`: start a Docker daemon (through
// the nvcf-runc shim where the capability bounding set requires it), run
// COMMAND with DOCKER_HOST pointing at it, then stop the daemon and put the
// host back (docker0, iptables chains, FORWARD policy, forwarding).
func runDocker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("docker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", filepath.Join(clusters.StateHome(), "dockerd"), "the daemon's socket, pid file and log")
	data := fs.String("data-root", filepath.Join(clusters.CacheHome(), "docker"), "the daemon's images and containers (kept between daemons)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("docker: give the command to run beside the daemon, e.g. harness docker -- make e2e")
	}
	if dockerd.Answers(ctx, "/var/run/docker.sock") {
		fmt.Fprintln(stderr, "harness: a Docker daemon answers on /var/run/docker.sock; using it")
		return runBeside(ctx, fs.Args(), "unix:///var/run/docker.sock", stdout, stderr)
	}
	bin, err := harnessrun.BinDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "harness: no Docker daemon found; starting one (log %s)\n", filepath.Join(*dir, "dockerd.log"))
	d, err := dockerd.Start(ctx, dockerd.Config{Dir: *dir, DataRoot: *data, Shim: filepath.Join(bin, dockerd.ShimRuntime)})
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	fmt.Fprintf(stderr, "harness: dockerd pid %d on %s\n", d.Pid(), d.Host())
	runErr := runBeside(ctx, fs.Args(), d.Host(), stdout, stderr)
	stopErr := d.Stop(context.WithoutCancel(ctx))
	if stopErr == nil {
		fmt.Fprintln(stderr, "harness: dockerd stopped; docker0, its iptables rules and the FORWARD policy are as before")
	}
	return errors.Join(runErr, stopErr)
}

// childGrace bounds how long an interrupted command may take to clean up
// (a run tearing down its clusters) before it is killed.
const childGrace = 5 * time.Minute

// runBeside runs argv with DOCKER_HOST=host. Interrupted, it passes
// SIGTERM on and waits for the command to clean up (make hands SIGTERM to
// its own children; a SIGKILL would leave them running after the daemon
// they use is stopped), up to childGrace.
func runBeside(ctx context.Context, argv []string, host string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childGrace
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker: %s: %w", argv[0], err)
	}
	return nil
}
