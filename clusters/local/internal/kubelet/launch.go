package kubelet

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// launch is what the container wrapper (shellWrapper) does in the pod's
// namespaces: bind-mount Mounts, set Hostname, change to Dir and exec Argv
// with Env.
type launch struct {
	Hostname string   `json:"hostname,omitempty"`
	Mounts   []mount  `json:"mounts,omitempty"`
	Dir      string   `json:"dir,omitempty"`
	Argv     []string `json:"argv"`
	// Env is not sent to RunWrapper: it inherits the process environment.
	Env []string `json:"-"`
}

// mount is one bind mount of a host path at a path the container expects.
type mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// buildLaunch translates one container of a pod into a process: the
// image's binary with command/args ($(VAR)-expanded against the container's
// environment), the environment, and the volume mounts. volumes maps a
// volume name to its host directory (volumeSet.sync); scratch is the
// container's own folder, its working directory unless WorkingDir exists.
//
// Command replaces the image's entrypoint, and the image holds one binary,
// so command[0] names that binary and is replaced by its local path; the
// rest of command, then args, follow.
func buildLaunch(ctx context.Context, pc *podContext, c *corev1.Container, images map[string]string, volumes map[string]string, scratch string, obj objects) (*launch, error) {
	bin, err := resolveImage(images, c.Image)
	if err != nil {
		return nil, err
	}
	env, err := containerEnv(ctx, pc, c, obj)
	if err != nil {
		return nil, err
	}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	argv := []string{bin}
	if len(c.Command) > 1 {
		for _, a := range c.Command[1:] {
			argv = append(argv, expand(a, lookup))
		}
	}
	for _, a := range c.Args {
		argv = append(argv, expand(a, lookup))
	}
	l := &launch{Hostname: pc.hostname, Argv: argv, Env: envList(env), Dir: scratch}
	if c.WorkingDir != "" {
		if st, err := os.Stat(c.WorkingDir); err == nil && st.IsDir() {
			l.Dir = c.WorkingDir
		}
	}
	for _, vm := range c.VolumeMounts {
		src, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %q: the pod has no such volume", vm.Name)
		}
		if !path.IsAbs(vm.MountPath) {
			return nil, fmt.Errorf("volumeMount %q: mountPath %q must be absolute", vm.Name, vm.MountPath)
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expand(vm.SubPathExpr, lookup)
		}
		if sub != "" {
			if err := checkRelPath(sub); err != nil {
				return nil, fmt.Errorf("volumeMount %q: %w", vm.Name, err)
			}
			src = filepath.Join(src, sub)
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o755); err != nil {
					return nil, err
				}
			}
		}
		l.Mounts = append(l.Mounts, mount{Source: src, Target: path.Clean(vm.MountPath), ReadOnly: vm.ReadOnly})
	}
	return l, nil
}
