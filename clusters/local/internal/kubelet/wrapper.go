package kubelet

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// WrapperCommand is the hidden argv[1] under which a binary may run
// RunWrapper.
const WrapperCommand = "__container"

// RunWrapper is shellWrapper written in Go, for a binary that prefers a
// hidden role of its own to /bin/sh: started by `ip netns exec` (so it is
// already in the pod's network namespace and a private mount namespace, and
// in a private UTS namespace), it bind-mounts the volumes, sets the
// hostname, and execs the container's binary, which keeps its pid. args is
// one JSON launch spec. It returns only on failure. The kubelet itself uses
// shellWrapper and does not need it.
func RunWrapper(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s: want one argument, the launch spec (this command is internal to the kubelet)", WrapperCommand)
	}
	var l launch
	if err := json.Unmarshal([]byte(args[0]), &l); err != nil {
		return fmt.Errorf("%s: bad launch spec: %w", WrapperCommand, err)
	}
	if len(l.Argv) == 0 {
		return errors.New(WrapperCommand + ": empty argv")
	}
	// Our mounts must never reach the host's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	for _, m := range l.Mounts {
		if err := bindMount(m); err != nil {
			return err
		}
	}
	if l.Hostname != "" {
		if err := unix.Sethostname([]byte(l.Hostname)); err != nil {
			return fmt.Errorf("set hostname %q: %w", l.Hostname, err)
		}
	}
	if l.Dir != "" {
		if err := os.Chdir(l.Dir); err != nil {
			return fmt.Errorf("working dir %s: %w", l.Dir, err)
		}
	}
	bin := l.Argv[0]
	if !strings.Contains(bin, "/") {
		p, err := exec.LookPath(bin)
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		bin = p
	}
	err := syscall.Exec(bin, l.Argv, os.Environ())
	return fmt.Errorf("exec %s: %w", l.Argv[0], err)
}

// bindMount mounts m.Source at m.Target, creating the mount point (an
// empty directory, or an empty file for a file source) when missing.
func bindMount(m mount) error {
	st, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("mount source %s: %w", m.Source, err)
	}
	if st.IsDir() {
		err = os.MkdirAll(m.Target, 0o755)
	} else if _, serr := os.Stat(m.Target); os.IsNotExist(serr) {
		if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(m.Target, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("mount point %s: %w", m.Target, err)
	}
	if err := unix.Mount(m.Source, m.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", m.Target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", m.Target, err)
		}
	}
	return nil
}
