package scenarios

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nvcf/conformance/clusters"
	"github.com/nvcf/conformance/deploy"
	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/model/topology"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

// Every scenario a base failure can fail asserts the baseline and expects
// a pass: a broken base is its verdict, and nothing else's.
func TestBaseAssertionsNameBaselineScenarios(t *testing.T) {
	for id := range baseAsserted {
		s, ok := catalog.ByID(id)
		require.True(t, ok, "%s is not in the catalogue", id)
		require.True(t, s.AssertsBaseline, "%s does not assert the baseline", id)
		require.True(t, s.Expect.IsPass(), id)
	}
	plaintext := &BaseFailure{Reason: reason.PlaintextToTLS, Origin: reason.OriginIngress, Part: basePylonGRPC}
	for id, want := range map[string]bool{
		"tls/pylon-verified": true, "registration/every-stargate-every-region": true, "registration/explicit-https": true,
		"quic/pylon-tunnel": false, "discovery/identities": false, "invocation/across-regions": false, "tls/wrong-root-server": false,
	} {
		s, ok := catalog.ByID(id)
		require.True(t, ok, id)
		require.Equal(t, want, baseAsserts(s, plaintext), id)
	}
	trust := &BaseFailure{Reason: reason.UnknownAuthority, Origin: reason.OriginPylon, Part: basePylonGRPC}
	s, _ := catalog.ByID("registration/explicit-https")
	require.True(t, baseAsserts(s, &BaseFailure{Reason: reason.TLSNotStarted, Origin: reason.OriginIngress, Part: basePylonGRPC}),
		"a Pylon that never starts TLS on https breaks explicit https")
	require.False(t, baseAsserts(s, trust), "explicit-https asserts the scheme, not the trust")
}

// A refusal the Pylon reports as its own guess, which the ingress saw
// and refused server-side, has the ingress as its origin; a client's
// alert the ingress saw is evidence only.
func TestServerSideCorroboratesPylonsRefusal(t *testing.T) {
	w := &baseWatch{}
	f := &BaseFailure{Reason: reason.PlaintextToTLS, Origin: reason.OriginPylon, Part: basePylonGRPC, Subject: "the base Pylon",
		Where: "refused by the base Pylon itself", Evidence: "its /status"}
	w.corroborate(f, []serverRefusal{{region: "region-b", pod: "ingress-x", reason: reason.BadCertificate, alert: true, count: 1},
		{region: "region-a", pod: "ingress-y", reason: reason.PlaintextToTLS, count: 3, last: "tls: first record does not look like a TLS handshake"}})
	require.Equal(t, reason.OriginIngress, f.Origin)
	require.Equal(t, "the base Pylon's plaintext-to-tls refused at region-a's ingress", f.Short())
	require.Contains(t, f.Evidence, "region-a's ingress (ingress-y) refused 3 connection(s) with plaintext-to-tls")
	require.Contains(t, f.Evidence, "region-b's ingress (ingress-x) saw 1 TLS alert(s) from its client saying bad-certificate")
	require.Equal(t, reason.PlaintextToTLS, reason.Of(f))
	require.Equal(t, reason.OriginIngress, reason.OriginOf(f))
	require.Contains(t, blockedBy(f), "blocked by the base Pylon's plaintext-to-tls refused at region-a's ingress, so the case has no verdict")

	trust := &BaseFailure{Reason: reason.UnknownAuthority, Origin: reason.OriginPylon, Where: "refused by the base Pylon itself"}
	w.corroborate(trust, []serverRefusal{{region: "region-a", reason: reason.BadCertificate, alert: true, count: 2}})
	require.Equal(t, reason.OriginPylon, trust.Origin, "the client refused: its alert does not make the ingress the origin")
}

func TestIngressCounts(t *testing.T) {
	d := Doc{v: map[string]any{"refused": map[string]any{"plaintext-to-tls": 3.0}, "client_alerts": map[string]any{"bad-certificate": 1.0},
		"last_refusal": "tls: first record does not look like a TLS handshake"}}
	counts, last := ingressCounts(d)
	require.Equal(t, map[string]int{"plaintext-to-tls": 3, alertKey + "bad-certificate": 1}, counts)
	require.Contains(t, last, "first record")
}

// The base Pylon's typed termination message comes first; a Stargate's
// is read when Pylon says nothing; a refusal counts once it was read the
// same on consecutive looks.
func TestBaseWatchReadsTerminationMessages(t *testing.T) {
	ctx := context.Background()
	topo, err := topology.Parse([]byte("name: fake\nclusters: [{name: region-a, role: stargate}, {name: workers, role: workers}]\n"))
	require.NoError(t, err)
	exited := func(name string, lbl map[string]string, container string, m reason.Message) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "nvcf", Labels: lbl},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: container, RestartCount: 2,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: m.Encode()}}}}}}
	}
	pylon := exited("pylon-abc", manifests.Labels(manifests.PylonName, manifests.PylonName), manifests.PylonName,
		reason.Message{Reason: reason.NoTrust, Origin: reason.OriginPylon, Detail: "trust bundle /etc/nvcf/trust/ca.crt holds no certificate"})
	stargate := exited("stargate-0", manifests.Labels(manifests.StargateName, manifests.StargateName), "stargate",
		reason.Message{Reason: reason.SchemeRequired, Origin: reason.OriginStargate, Detail: "remote watch URL has no scheme"})
	cs := fake.NewClientset(pylon, stargate)
	w := &World{Config: &catalog.RunConfig{TimeScale: 1, Environment: &clusters.Environment{}}, Topology: topo, deployer: &kubeDeployer{cs: cs}, Log: slog.New(slog.DiscardHandler)}
	e := w.Env(&deploy.Result{Namespace: "nvcf"}, t.TempDir())

	bw := e.newBaseWatch()
	bw.confirm = 0
	require.Nil(t, bw.look(ctx), "one look establishes nothing")
	f := bw.look(ctx)
	require.NotNil(t, f, "the same refusal on the next look is established")
	require.Equal(t, reason.NoTrust, f.Reason)
	require.Equal(t, reason.OriginPylon, f.Origin)
	require.Equal(t, basePylonGRPC, f.Part)
	require.Contains(t, f.Evidence, "holds no certificate")

	require.NoError(t, cs.CoreV1().Pods("nvcf").Delete(ctx, pylon.Name, metav1.DeleteOptions{}))
	require.Nil(t, bw.look(ctx), "another refusal starts over")
	f = bw.look(ctx)
	require.NotNil(t, f)
	require.Equal(t, reason.SchemeRequired, f.Reason)
	require.Equal(t, reason.OriginStargate, f.Origin)
	require.Equal(t, baseStargate, f.Part)
	require.Equal(t, "the base Stargate region-a/stargate-0's scheme-required refused by stargate at its start", f.Short())

	require.NoError(t, cs.CoreV1().Pods("nvcf").Delete(ctx, stargate.Name, metav1.DeleteOptions{}))
	require.Nil(t, bw.look(ctx))
	require.Nil(t, bw.look(ctx), "nothing refused: no base failure")
}
