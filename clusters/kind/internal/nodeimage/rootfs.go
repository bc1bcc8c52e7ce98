package nodeimage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Suite is the Debian release of the node's root.
const Suite = "bookworm"

// Packages are installed into the node's root beside debootstrap's
// minimal base: systemd as PID 1, runc for containerd, and what the
// kubelet, kube-proxy and the CNI plugins run (iptables, nftables, ip,
// conntrack, ethtool, socat; mount and util-linux are in the base).
var Packages = []string{
	"systemd", "systemd-sysv", "dbus", "iptables", "nftables", "iproute2", "conntrack", "ethtool", "kmod",
	"runc", "libseccomp2", "ca-certificates", "procps", "socat",
}

// EnvMirror names the Debian mirror for debootstrap; unset, the machine's
// own apt sources give it.
const EnvMirror = "NVCF_DEBIAN_MIRROR"

func rootfsKey() string {
	h := sha256.Sum256([]byte(Suite + "\n" + strings.Join(Packages, ",")))
	return hex.EncodeToString(h[:])[:12]
}

// mirror returns the Debian mirror: $NVCF_DEBIAN_MIRROR, else the first
// URIs of the machine's apt sources for Debian itself.
func mirror() (string, error) {
	if m := os.Getenv(EnvMirror); m != "" {
		return m, nil
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, stanza := range strings.Split(string(b), "\n\n") {
			var uri, suites string
			for _, l := range strings.Split(stanza, "\n") {
				if v, ok := strings.CutPrefix(l, "URIs:"); ok {
					uri = strings.Fields(v + " x")[0]
				}
				if v, ok := strings.CutPrefix(l, "Suites:"); ok {
					suites = v
				}
			}
			if uri != "x" && uri != "" && strings.Contains(" "+suites+" ", " "+Suite+" ") {
				return uri, nil
			}
		}
	}
	if f, err := os.Open("/etc/apt/sources.list"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 3 && fs[0] == "deb" && fs[2] == Suite {
				return fs[1], nil
			}
		}
	}
	return "", fmt.Errorf("no Debian mirror for %s in /etc/apt/sources.list(.d): set %s", Suite, EnvMirror)
}

// ensureRootfs debootstraps the node's Debian root into the cache once and
// returns its folder and a tar of it (without /dev, apt's lists and the
// downloaded packages). debootstrap needs root.
func ensureRootfs(ctx context.Context, o Options) (dir, tarPath string, err error) {
	base := filepath.Join(o.CacheDir, "kind-rootfs-"+Suite+"-"+rootfsKey())
	dir, tarPath = filepath.Join(base, "rootfs"), filepath.Join(base, "rootfs.tar")
	if _, err := os.Stat(filepath.Join(base, "done")); err == nil {
		return dir, tarPath, nil
	}
	if os.Geteuid() != 0 {
		return "", "", errors.New("building the node image's Debian root (debootstrap) needs root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return "", "", errors.New("debootstrap not found: install Debian's debootstrap package (apt-get install debootstrap)")
	}
	m, err := mirror()
	if err != nil {
		return "", "", err
	}
	if err := os.RemoveAll(base); err != nil {
		return "", "", err
	}
	debs := filepath.Join(o.CacheDir, "debootstrap-debs")
	for _, d := range []string{base, debs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", err
		}
	}
	start := time.Now()
	fmt.Fprintf(o.Progress, "debootstrap %s with %d packages from %s (about 3 min; log %s)…\n", Suite, len(Packages), m, filepath.Join(base, "debootstrap.log"))
	if err := run(ctx, o, filepath.Join(base, "debootstrap.log"), "debootstrap", "--variant=minbase",
		"--cache-dir="+debs, "--include="+strings.Join(Packages, ","), Suite, dir, m); err != nil {
		return "", "", err
	}
	fmt.Fprintf(o.Progress, "debootstrap done in %s; packing the root\n", time.Since(start).Round(time.Second))
	if err := run(ctx, o, filepath.Join(base, "tar.log"), "tar", "--numeric-owner", "--xattrs", "-C", dir,
		"--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./var/cache/apt/archives/*.deb",
		"--exclude=./var/lib/apt/lists/*", "-cf", tarPath+".partial", "."); err != nil {
		return "", "", err
	}
	if err := os.Rename(tarPath+".partial", tarPath); err != nil {
		return "", "", err
	}
	return dir, tarPath, os.WriteFile(filepath.Join(base, "done"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// run runs a command at the lowest CPU and IO priority, its output in log.
func run(ctx context.Context, o Options, log string, name string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "nice", append([]string{"-n", "19", "ionice", "-c3", name}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (see %s)", name, err, log)
	}
	return nil
}
