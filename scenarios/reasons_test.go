package scenarios

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"

	"github.com/nvcf/conformance/fixtures/tunnel"
	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/scenarios/probe"
	"github.com/nvcf/conformance/wire/reason"
	"github.com/nvcf/conformance/wire/stargatepb"
)

// One test per reason channel: for each, the catalogue's own expectation
// accepts the refusal it is about, and fails the case when the same channel
// carries another reason, the right reason from another origin, or no
// typed reason at all.

func expectationOf(t *testing.T, id string) catalog.Expectation {
	t.Helper()
	s, ok := catalog.ByID(id)
	require.True(t, ok, id)
	return s.Expect
}

// refusingStargate ends every registration with its refusal.
type refusingStargate struct {
	stargatepb.UnimplementedStargateControlPlaneServer
	refusal error
}

func (f *refusingStargate) RegisterInferenceServer(grpc.BidiStreamingServer[stargatepb.InferenceServerRegistration, stargatepb.InferenceServerAck]) error {
	return f.refusal
}

// registerRefused registers through the probe, for real, against a
// Stargate that answers with refusal, and returns what the probe saw.
func registerRefused(t *testing.T, refusal error) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	stargatepb.RegisterStargateControlPlaneServer(srv, &refusingStargate{refusal: refusal})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	p := probe.New(probe.Options{Timeout: 5 * time.Second})
	_, err = p.Register(context.Background(), probe.GRPCTarget{Addr: ln.Addr().String(), Authority: "sg-0.sg.elsewhere.test:50071", TLS: probe.TLS{Plaintext: true}},
		&stargatepb.InferenceServerRegistration{InferenceServerId: "rogue"})
	return err
}

// gRPC status details: the probe registers for real against a server that
// refuses; only the router's invalid-authority satisfies authority/unknown.
func TestReasonChannelGRPCStatusDetails(t *testing.T) {
	register := func(refusal error) error { return registerRefused(t, refusal) }
	unknown := expectationOf(t, "authority/unknown")
	require.NoError(t, judge(unknown, register(reason.Status(codes.InvalidArgument, reason.InvalidAuthority, reason.OriginRouter, "no match"))))
	for name, refusal := range map[string]error{
		"Stargate's invalid-registration":    reason.Status(codes.InvalidArgument, reason.InvalidRegistration, reason.OriginStargate, "registration without inference_server_id"),
		"invalid-authority said by Stargate": reason.Status(codes.InvalidArgument, reason.InvalidAuthority, reason.OriginStargate, "no match"),
		"InvalidArgument without details":    status.Error(codes.InvalidArgument, "invalid-authority"),
		"the router's no-such-pod":           reason.Status(codes.Unavailable, reason.NoSuchPod, reason.OriginRouter, "no endpoint"),
		"Unavailable after the handshake":    status.Error(codes.Unavailable, "stargate is not ready"),
	} {
		require.Error(t, judge(unknown, register(refusal)), name)
	}

	noPod := expectationOf(t, "authority/no-such-pod")
	require.NoError(t, judge(noPod, register(reason.Status(codes.Unavailable, reason.NoSuchPod, reason.OriginRouter, "no endpoint"))))
	for _, refusal := range []error{
		reason.Status(codes.Unavailable, reason.NotReady, reason.OriginRouter, "not ready"),
		reason.Status(codes.Unavailable, reason.BackendUnreachable, reason.OriginRouter, "unreachable"),
		status.Error(codes.Unavailable, "no endpoint"),
	} {
		require.Error(t, judge(noPod, register(refusal)), "%v", refusal)
	}
}

// gRPC status code and message, as a real router or Stargate sends it:
// only the listed texts, whole and under their code, are typed; any other
// is unknown, with its text kept for the evidence.
func TestReasonChannelRealGRPCStatus(t *testing.T) {
	register := func(refusal error) error { return registerRefused(t, refusal) }
	unknown := expectationOf(t, "authority/unknown")
	require.NoError(t, judge(unknown, register(status.Error(codes.InvalidArgument,
		"registration authority sg-0.sg.elsewhere.test does not match advertised stargate hostname template"))))
	require.NoError(t, judge(unknown, register(status.Error(codes.InvalidArgument, "registration requires a target stargate authority"))))
	for name, refusal := range map[string]error{
		"Stargate's admission":          status.Error(codes.InvalidArgument, "inference_server_url is empty"),
		"the router's text, wrong code": status.Error(codes.Unavailable, "registration requires a target stargate authority"),
		"the router's text, prefixed":   status.Error(codes.InvalidArgument, "proxy: registration requires a target stargate authority"),
		"the router's not-ready":        status.Error(codes.Unavailable, "target stargate sg-0 is not ready"),
	} {
		require.Error(t, judge(unknown, register(refusal)), name)
	}
	// An unlisted text is unknown, and the evidence keeps it.
	err := register(status.Error(codes.InvalidArgument, "some text no list names"))
	require.Equal(t, reason.Unknown, reason.Of(err))
	require.Contains(t, err.Error(), "some text no list names")
	require.Error(t, judge(unknown, err))

	// The real router cannot tell a missing pod from a not-ready one: its
	// not-ready counts for a missing pod only with the step's proof that
	// the pod does not exist.
	notReady := expectationOf(t, "authority/not-ready")
	require.NoError(t, judge(notReady, register(status.Error(codes.Unavailable, "target stargate stargate-not-ready is not ready"))))
	for _, id := range []string{"authority/no-such-pod", "authority/dashed-ip"} {
		exp := expectationOf(t, id)
		bare := register(status.Error(codes.Unavailable, "target stargate stargate-99 is not ready"))
		require.ErrorContains(t, judge(exp, bare), "proved no such thing", id)
		require.NoError(t, judge(exp, &provenAbsent{err: bare, region: "region-a", pod: "stargate-99"}), id)
		// The proof admits not-ready only, and only from the router.
		other := register(status.Error(codes.Unavailable, "timed out connecting to stargate target"))
		require.Error(t, judge(exp, &provenAbsent{err: other, region: "region-a", pod: "stargate-99"}), id)
		fromStargate := reason.WrapFrom(reason.NotReady, reason.OriginStargate, errors.New("not ready"))
		require.Error(t, judge(exp, &provenAbsent{err: fromStargate, region: "region-a", pod: "stargate-99"}), id)
		// Accepted (no refusal) stays a failure, proof or not.
		require.Error(t, judge(exp, nil), id)
	}
	// The proof does not widen an expectation without OrIfAbsent.
	require.Error(t, judge(unknown, &provenAbsent{err: register(status.Error(codes.Unavailable, "target stargate sg-0 is not ready")), pod: "sg-0"}))
}

// QUIC close of a real router's relay: code 0 and its own text.
func TestReasonChannelRealQUICClose(t *testing.T) {
	closed := func(code quic.ApplicationErrorCode, remote bool, msg string) error {
		err := fmt.Errorf("quic tunnel: %w", &quic.ApplicationError{Remote: remote, ErrorCode: code, ErrorMessage: msg})
		r, o := probe.Refusal(err)
		return reason.WrapFrom(r, o, err)
	}
	sni := expectationOf(t, "quic/unknown-sni")
	require.NoError(t, judge(sni, closed(0, true, "unknown target SNI")))
	require.NoError(t, judge(sni, closed(0, true, "missing target SNI")))
	require.Error(t, judge(sni, closed(0, false, "unknown target SNI")), "our own close is no refusal")
	require.Error(t, judge(sni, closed(tunnel.CodeRejected, true, "unknown target SNI")), "under another code it is no real text, nor a typed message")
	require.Error(t, judge(sni, closed(0, true, "target stargate not ready")), "not-ready without the proof the SNI names no pod")
	require.NoError(t, judge(sni, &provenAbsent{err: closed(0, true, "target stargate not ready"), pod: "stargate-99"}))
	require.Error(t, judge(sni, &provenAbsent{err: closed(0, true, "router shutdown"), pod: "stargate-99"}))
	require.Error(t, judge(sni, closed(0, true, "unknown SNI")))
	notReady := expectationOf(t, "quic/not-ready")
	require.NoError(t, judge(notReady, closed(0, true, "target stargate not ready")))
	require.Error(t, judge(notReady, closed(0, true, "router shutdown")))
}

// Termination message: what a component wrote to its terminationMessagePath.
func TestReasonChannelTerminationMessage(t *testing.T) {
	exit := func(msg string) error {
		return terminated(&corev1.ContainerStateTerminated{ExitCode: 1, Message: msg}, "Stargate variant exited with code 1")
	}
	schemeLess := expectationOf(t, "watch/scheme-less-remote-refused")
	require.NoError(t, judge(schemeLess, exit(reason.Message{Reason: reason.SchemeRequired, Origin: reason.OriginStargate, Detail: "no scheme"}.Encode())))
	for _, msg := range []string{
		reason.Message{Reason: reason.SchemeRequired, Origin: reason.OriginPylon}.Encode(),
		reason.Message{Reason: reason.InsecureRefused, Origin: reason.OriginStargate}.Encode(),
		`{"level":"ERROR","msg":"nvcf-ref: scheme-required: remote watch URL has no scheme"}`,
		"nvcf-ref: scheme-required: remote watch URL has no scheme",
		"",
	} {
		require.Error(t, judge(schemeLess, exit(msg)), msg)
	}
}

// TLS alerts: each alert its own reason, always the peer's.
func TestReasonChannelTLSAlert(t *testing.T) {
	alert := func(a uint8, remote bool) error {
		err := &quic.TransportError{Remote: remote, ErrorCode: quic.TransportErrorCode(0x100 + uint64(a))}
		r, o := probe.Refusal(err)
		return reason.WrapFrom(r, o, err)
	}
	untrusted := expectationOf(t, "quic/untrusted-client-cert")
	require.NoError(t, judge(untrusted, alert(reason.AlertUnknownCA, true)))
	require.Error(t, judge(untrusted, alert(reason.AlertBadCertificate, true)), "bad_certificate is not unknown_ca")
	require.Error(t, judge(untrusted, alert(reason.AlertCertificateExpired, true)))
	require.Error(t, judge(untrusted, alert(reason.AlertUnknownCA, false)), "an alert we sent ourselves is no refusal")
	require.Error(t, judge(untrusted, reason.WrapFrom(reason.UntrustedClientCert, reason.OriginProbe, errors.New("x"))), "not the peer's")
}

// QUIC close message: the reason.Message a peer closed the connection with.
func TestReasonChannelQUICCloseMessage(t *testing.T) {
	closed := func(msg string) error {
		err := fmt.Errorf("quic tunnel: %w", &quic.ApplicationError{Remote: true, ErrorCode: tunnel.CodeRejected, ErrorMessage: msg})
		r, o := probe.Refusal(err)
		return reason.WrapFrom(r, o, err)
	}
	badToken := expectationOf(t, "quic/bad-token")
	require.NoError(t, judge(badToken, closed(reason.Message{Reason: reason.BadToken, Origin: reason.OriginStargate}.Encode())))
	require.Error(t, judge(badToken, closed(reason.Message{Reason: reason.BadToken, Origin: reason.OriginQUICRelay}.Encode())))
	require.Error(t, judge(badToken, closed(reason.Message{Reason: reason.BadHandshake, Origin: reason.OriginStargate}.Encode())))
	require.Error(t, judge(badToken, closed(string(reason.BadToken))), "a bare reason string is no typed message")
}

// HandshakeAck reason: the text a Stargate refused the tunnel handshake
// with, always Stargate's (the probe reads it from the ack, quic.go). A
// real Stargate's texts map by equality; only the registration's refusal
// satisfies quic/unregistered-tunnel.
func TestReasonChannelHandshakeAck(t *testing.T) {
	ack := func(text string) error {
		return reason.WrapFrom(tunnel.AckReason(text), reason.OriginStargate, fmt.Errorf("handshake refused with reason %q", text))
	}
	unregistered := expectationOf(t, "quic/unregistered-tunnel")
	require.NoError(t, judge(unregistered, ack("unauthorized inference_server_id")))
	require.NoError(t, judge(unregistered, ack(string(reason.Unregistered))), "the reference sends the typed reason itself")
	for _, text := range []string{"authentication failed", "routing key mismatch", "duplicate connection", "unauthorized", ""} {
		require.Error(t, judge(unregistered, ack(text)), text)
	}
	// A text no list names is unknown, quoted in the error.
	err := ack("cluster id mismatch")
	require.Equal(t, reason.Unknown, reason.Of(err))
	require.Contains(t, err.Error(), `"cluster id mismatch"`)
	relayed := fmt.Errorf("quic tunnel: %w", &quic.ApplicationError{Remote: true, ErrorCode: tunnel.CodeRejected,
		ErrorMessage: reason.Message{Reason: reason.Unregistered, Origin: reason.OriginQUICRelay}.Encode()})
	r, o := probe.Refusal(relayed)
	require.Error(t, judge(unregistered, reason.WrapFrom(r, o, relayed)), "not the Stargate's refusal")
}

// /status document: the reasons a role's document holds, with their origins.
func TestReasonChannelStatusDocument(t *testing.T) {
	wrongRoot := expectationOf(t, "tls/wrong-root-server")
	failure := func(s string) error { return doc(t, s).Failure(reason.OriginPylon) }
	require.NoError(t, judge(wrongRoot, failure(`{"registrations": [{"stargate": "sg-0", "reason": "unknown-authority"}]}`)))
	require.Error(t, judge(wrongRoot, failure(`{"registrations": [{"stargate": "sg-0", "reason": "unknown-authority", "origin": "router"}]}`)))
	require.Error(t, judge(wrongRoot, failure(`{"registrations": [{"stargate": "sg-0", "reason": "hostname-mismatch"}]}`)))
	require.Error(t, judge(wrongRoot, failure(`{"registrations": [{"stargate": "sg-0", "reason": "unknown-authority"}, {"stargate": "sg-1", "reason": "expired"}]}`)),
		"every refusal the document holds is judged")
}

// The probe's own error: its verification refused the server.
func TestReasonChannelProbeError(t *testing.T) {
	verify := func(err error) error {
		r, o := probe.Refusal(err)
		return reason.WrapFrom(r, o, err)
	}
	wrongRoot := expectationOf(t, "tls/wrong-root")
	require.NoError(t, judge(wrongRoot, verify(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})))
	require.Error(t, judge(wrongRoot, verify(&tls.CertificateVerificationError{Err: x509.HostnameError{Host: "x"}})))
	require.Error(t, judge(wrongRoot, verify(reason.Status(codes.Unavailable, reason.UnknownAuthority, reason.OriginIngress, "said the ingress"))),
		"the same reason said by a component is not the probe's verification")
}

// An attempt that was accepted and then found on the wrong replica on the
// server side fails a fail-closed case as accepted (no refusal, no
// "unknown"); a refusal beside it is still judged; a step's failure
// inside it is still found first; and the control's configuration is not
// satisfied by it.
func TestAcceptedElsewhereIsNoRefusal(t *testing.T) {
	notReady := expectationOf(t, "authority/not-ready")
	elsewhere := accepted(errors.New("server side: replicas holding a registration of x: want [region-a/stargate-0], got [region-a/stargate-not-ready]"))
	err := judge(notReady, elsewhere)
	require.ErrorContains(t, err, "nothing refused it")
	require.Empty(t, observedReason(elsewhere), "reported as accepted")
	require.Nil(t, accepted(nil))
	require.Error(t, judge(expectationOf(t, "authority/routes-to-named"), elsewhere), "a positive case fails on it")

	refusal := reason.WrapFrom(reason.NotReady, reason.OriginRouter, errors.New("not ready"))
	require.NoError(t, judge(notReady, errors.Join(refusal, accepted(errors.New("x")))))
	require.Equal(t, string(reason.NotReady), observedReason(errors.Join(refusal, accepted(errors.New("x")))))

	step := accepted(stepFailed("ask every Stargate", errors.New("down")))
	require.NotNil(t, stepFailure(step))
}
