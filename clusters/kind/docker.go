package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nvcf/conformance/clusters/dockerd"
)

// daemonDir is where the provider keeps the Docker daemon it starts itself
// (socket, pid, log, and the host's state for the `down` that stops it).
// (A dot name: no environment, a DNS label, can take it.)
func (p *provider) daemonDir() string { return filepath.Join(p.o.StateRoot, ".dockerd") }

// findDocker returns the DOCKER_HOST of a daemon that answers: $DOCKER_HOST
// when set, else the system's socket, else the one this provider started
// earlier. Empty when none answers.
func (p *provider) findDocker(ctx context.Context) string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		if sock, ok := strings.CutPrefix(h, "unix://"); !ok || dockerd.Answers(ctx, sock) {
			return h
		}
		return ""
	}
	for _, sock := range []string{"/var/run/docker.sock", filepath.Join(p.daemonDir(), "docker.sock")} {
		if dockerd.Answers(ctx, sock) {
			return "unix://" + sock
		}
	}
	return ""
}

// ensureDocker finds a daemon, or starts one through clusters/dockerd,
// detached so that the clusters outlive this command: `down` stops it and
// puts the host's firewall back once no container is left.
func (p *provider) ensureDocker(ctx context.Context, progress io.Writer) (string, error) {
	if h := p.findDocker(ctx); h != "" {
		fmt.Fprintf(progress, "kind: using the Docker daemon at %s\n", h)
		return h, nil
	}
	if os.Getenv("DOCKER_HOST") != "" {
		return "", fmt.Errorf("DOCKER_HOST=%s does not answer; start that daemon, or unset DOCKER_HOST to let the harness start one", os.Getenv("DOCKER_HOST"))
	}
	dir := p.daemonDir()
	if d, err := dockerd.Adopt(dir); err == nil {
		// The daemon an earlier up started is gone (killed, or the machine
		// rebooted): the host goes back to its state before that one first.
		fmt.Fprintf(progress, "kind: the Docker daemon the harness started earlier no longer answers; stopping what is left of it and restoring the host first\n")
		if err := d.Stop(ctx); err != nil {
			return "", fmt.Errorf("clean up the earlier Docker daemon in %s: %w", dir, err)
		}
	}
	fmt.Fprintf(progress, "kind: no Docker daemon answers (DOCKER_HOST unset, /var/run/docker.sock silent); starting one through clusters/dockerd (log %s); `harness down --provider kind` stops it and restores the firewall\n",
		filepath.Join(dir, "dockerd.log"))
	d, err := dockerd.Start(ctx, dockerd.Config{Dir: dir, DataRoot: p.o.DockerData, Shim: filepath.Join(p.o.BinDir, dockerd.ShimRuntime), Detach: true})
	if err != nil {
		return "", fmt.Errorf("start a Docker daemon for kind: %w", err)
	}
	fmt.Fprintf(progress, "kind: dockerd pid %d on %s\n", d.Pid(), d.Host())
	return d.Host(), nil
}

// stopOwnDaemon stops the daemon this provider started, when no container
// is left on it, and puts the host back.
func (p *provider) stopOwnDaemon(ctx context.Context, host string) error {
	d, err := dockerd.Adopt(p.daemonDir())
	if errors.Is(err, dockerd.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if host == d.Host() {
		out, err := docker(ctx, host, "ps", "-aq")
		if err != nil {
			return err
		}
		if left := strings.Fields(out); len(left) > 0 {
			// Our daemon, so these are ours too: something was not deleted.
			return fmt.Errorf("the Docker daemon the harness started still holds containers %v; it stays up for a second down", left)
		}
	}
	return d.Stop(ctx)
}

// docker runs the docker CLI against host and returns its standard output.
func docker(ctx context.Context, host string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// ensureNetwork makes the Docker network the kind nodes join, with its
// range in the test range (kind would otherwise pick one itself) and no
// masquerading: the nodes talk to each other and to the host only.
func ensureNetwork(ctx context.Context, host string) error {
	out, err := docker(ctx, host, "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", NetworkName)
	if err == nil {
		if strings.TrimSpace(out) != NodeNetwork.String() {
			return fmt.Errorf("docker network %s exists with range %q, not %s: remove it (docker network rm %s)", NetworkName, strings.TrimSpace(out), NodeNetwork, NetworkName)
		}
		return nil
	}
	gw := NodeNetwork.Addr().Next()
	_, err = docker(ctx, host, "network", "create", "--driver", "bridge", "--subnet", NodeNetwork.String(), "--gateway", gw.String(),
		"--opt", "com.docker.network.bridge.name=nvcfkind0", "--opt", "com.docker.network.bridge.enable_ip_masquerade=false",
		"--label", "managed-by=nvcf-harness", NetworkName)
	return err
}

// removeNetwork removes the nodes' network once no container is on it.
func removeNetwork(ctx context.Context, host string) error {
	out, err := docker(ctx, host, "network", "inspect", "-f", "{{len .Containers}}", NetworkName)
	if err != nil {
		return nil // gone already
	}
	if strings.TrimSpace(out) != "0" {
		return nil // another environment's nodes
	}
	_, err = docker(ctx, host, "network", "rm", NetworkName)
	return err
}

// loadImage loads the node image's archive unless the daemon has it.
func loadImage(ctx context.Context, host string, img *NodeImage, progress io.Writer) error {
	if _, err := docker(ctx, host, "image", "inspect", "--format", "{{.Id}}", img.Ref); err == nil {
		return nil
	}
	fmt.Fprintf(progress, "kind: loading the node image %s into Docker…\n", img.Ref)
	_, err := docker(ctx, host, "load", "-i", img.Archive)
	return err
}

// memory returns the memory in use by the named containers, in bytes
// (docker stats).
func memory(ctx context.Context, host string, containers []string) (int64, error) {
	out, err := docker(ctx, host, "stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}")
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, l := range strings.Split(out, "\n") {
		name, use, ok := strings.Cut(l, "\t")
		if !ok || !slices.Contains(containers, name) {
			continue
		}
		used, _, _ := strings.Cut(use, " / ")
		b, err := parseBytes(strings.TrimSpace(used))
		if err != nil {
			return 0, err
		}
		sum += b
	}
	return sum, nil
}

func parseBytes(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("docker stats: %q: %w", s, err)
			}
			return int64(f * u.mult), nil
		}
	}
	return 0, fmt.Errorf("docker stats: unknown size %q", s)
}

// importInto imports an image archive into a node's containerd, in the
// kubelet's namespace.
func importInto(ctx context.Context, host, node, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "docker", "exec", "-i", node, "ctr", "--namespace=k8s.io", "images", "import", "--all-platforms", "--local", "-")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import %s into node %s: %w: %s", archive, node, err, out)
	}
	return nil
}
