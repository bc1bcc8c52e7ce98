package manifests

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/nvcf/conformance/fixtures/defects"
	"github.com/nvcf/conformance/model/matrix"
)

// TestDefectSwitchReachesOnlyItsRole: a Defect puts the switch and the test
// profile on the containers of its role and nowhere else; none by default.
func TestDefectSwitchReachesOnlyItsRole(t *testing.T) {
	switched := func(v Values) map[string]bool {
		out := map[string]bool{}
		for _, o := range render(t, v) {
			spec, ok := podSpecOf(o)
			if !ok {
				continue
			}
			for _, c := range spec.Containers {
				e := env(c)
				if e[defects.EnvVar] != "" {
					require.Equal(t, defects.ProfileTest, e[defects.ProfileEnvVar], "%s/%s", o.GetName(), c.Name)
					require.Equal(t, string(defects.RouterDefaultBackend), e[defects.EnvVar])
					out[o.GetName()] = true
				} else {
					require.Empty(t, e[defects.ProfileEnvVar], "%s/%s: test profile without a defect", o.GetName(), c.Name)
				}
			}
		}
		return out
	}
	require.Empty(t, switched(stargateValues(matrix.KindStatefulSet)))
	require.Empty(t, switched(workerValues(matrix.Bundle)))
	v := stargateValues(matrix.KindDeployment)
	v.Defect = Defect{Role: "router", Names: string(defects.RouterDefaultBackend)}
	got := switched(v)
	require.Len(t, got, 1)
	router := find[*appsv1.Deployment](render(t, v), "router")
	require.NotNil(t, router)
	require.True(t, got[router.GetName()])
	ru := router.Spec.Strategy.RollingUpdate
	require.NotNil(t, ru, "a defective role's old pod goes first")
	require.Zero(t, ru.MaxSurge.IntValue())
	plain := find[*appsv1.Deployment](render(t, stargateValues(matrix.KindDeployment)), "router")
	require.Nil(t, plain.Spec.Strategy.RollingUpdate, "no defect, the default strategy")
	w := workerValues(matrix.Bundle)
	w.Defect = v.Defect
	require.Empty(t, switched(w), "a router defect reaches no Pylon")
}
