package podnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotRoot is wrapped by every error caused by missing privileges.
var ErrNotRoot = errors.New("the embedded provider's pod network needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run the harness as root, e.g. with sudo")

// RequireRoot returns an error wrapping ErrNotRoot unless the process runs
// as root, and says which tool is missing when iproute2 or nftables is.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("uid %d: %w", os.Geteuid(), ErrNotRoot)
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found in PATH (install iproute2 and nftables; hack/deps.sh does): %w", tool, err)
		}
	}
	return nil
}

// run executes a command, feeding it stdin, and returns its stdout; the
// error names the command and carries its stderr.
func run(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if stdin != "" {
			msg += "\ninput:\n" + stdin
		}
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

// ipBatch runs several `ip` commands (one per line, without the leading
// "ip") in one process; netns, when set, runs them inside that namespace.
func ipBatch(ctx context.Context, netns string, lines ...string) error {
	args := []string{"-batch", "-"}
	if netns != "" {
		args = append([]string{"-n", netns}, args...)
	}
	_, err := run(ctx, strings.Join(lines, "\n")+"\n", "ip", args...)
	return err
}

// linkExists reports whether a link of that name is in the host namespace.
func linkExists(name string) bool {
	_, err := os.Stat("/sys/class/net/" + name)
	return err == nil
}

// netnsExists reports whether the named network namespace exists.
func netnsExists(name string) bool {
	_, err := os.Stat("/run/netns/" + name)
	return err == nil
}
