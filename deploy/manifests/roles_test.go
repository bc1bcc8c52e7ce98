package manifests

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nvcf/conformance/fixtures/echo"
	"github.com/nvcf/conformance/fixtures/ingress"
	"github.com/nvcf/conformance/fixtures/nvcfbuild"
	"github.com/nvcf/conformance/fixtures/pylon"
	"github.com/nvcf/conformance/fixtures/router"
	"github.com/nvcf/conformance/fixtures/stargate"
	"github.com/nvcf/conformance/fixtures/workerauth"
	"github.com/nvcf/conformance/model/matrix"
)

// parseRole runs the reference role's own flag and environment parsing on
// a rendered container, with the downward-API variables filled as a
// kubelet would: an unknown flag, a bad value or a missing setting fails
// here, not in a cluster.
func parseRole(c corev1.Container, podName string) error {
	env := map[string]string{"POD_NAME": podName, "POD_NAMESPACE": Namespace, "POD_IP": "198.18.10.5"}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "value-of-" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	getenv := func(k string) string { return env[k] }
	if len(c.Args) == 0 {
		return errors.New("no args")
	}
	role, args := c.Args[0], c.Args[1:]
	if strings.HasPrefix(role, "-") { // the nvcf flavor: the role from the environment
		role, args = env[RoleEnv], c.Args
	}
	args = expandVars(args, env)
	var err error
	switch role {
	case "stargate":
		_, err = stargate.ParseConfig(args, getenv, stargate.NewTunnel(nil).Flags)
	case "router":
		_, err = router.ParseConfig(args, getenv, router.NewQUIC(nil).Flags)
	case "ingress":
		_, err = ingress.ParseConfig(args, getenv)
	case "pylon":
		_, err = pylon.ParseConfig(args, getenv, pylon.NewTunnel(nil).Flags)
	case GatewayName:
		_, err = workerauth.ParseConfig(args, getenv)
	case "echo":
		_, err = echo.ParseConfig(args)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	// Files under the mount paths exist only inside the pod (mounted volumes).
	if errors.Is(err, fs.ErrNotExist) && (strings.Contains(err.Error(), "/etc/nvcf/") || strings.Contains(err.Error(), workerTokenDir+"/")) {
		return nil
	}
	return err
}

// expandVars replaces $(VAR) in args as a kubelet does.
func expandVars(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}

var varRef = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)

// roleOf is the role a rendered container runs.
func roleOf(c corev1.Container) string {
	if len(c.Args) > 0 && !strings.HasPrefix(c.Args[0], "-") {
		return c.Args[0]
	}
	for _, e := range c.Env {
		if e.Name == RoleEnv {
			return e.Value
		}
	}
	return ""
}

func TestRenderedArgsParseWithTheReferenceRoles(t *testing.T) {
	mtls := stargateValues(matrix.KindDeployment)
	mtls.Stargate.ClientCA = true
	dns := stargateValues(matrix.KindStatefulSet)
	dns.Stargate.Discovery = matrix.DNS
	worker := workerValues(matrix.GRPCOverride)
	worker.Worker.Pylons[0].ClientTLSSecret = ClientTLSSecret
	cases := []Values{stargateValues(matrix.KindStatefulSet), mtls, dns, workerValues(matrix.System), workerValues(matrix.Bundle), worker}
	// The reference roles take every feature, whatever a real build lacks.
	all := nvcfbuild.Reference()
	for _, v := range slices.Clone(cases) {
		v.Flavor, v.Build = FlavorNVCF, &all
		cases = append(cases, v)
	}
	seen := map[string]bool{}
	for _, v := range cases {
		for _, o := range render(t, v) {
			spec, ok := podSpecOf(o)
			if !ok {
				continue
			}
			for _, c := range spec.Containers {
				require.NoError(t, parseRole(c, o.GetName()+"-0"), "%s %s/%s container %s args %v", v.Flavor, v.Cluster, o.GetName(), c.Name, c.Args)
				seen[roleOf(c)] = true
			}
		}
	}
	require.Equal(t, map[string]bool{"stargate": true, "router": true, "ingress": true, "pylon": true, "echo": true, GatewayName: true}, seen)
}

// The check above can fail: a flag the role does not know is refused.
func TestParseRoleRefusesUnknownFlags(t *testing.T) {
	for _, role := range []string{"stargate", "router", "ingress", "pylon", "echo", GatewayName} {
		c := corev1.Container{Args: []string{role, "--no-such-flag=1"}, Env: []corev1.EnvVar{{Name: EnvBootstrap, Value: "https://x.test:50071"}}}
		require.Error(t, parseRole(c, "p-0"), role)
	}
}
