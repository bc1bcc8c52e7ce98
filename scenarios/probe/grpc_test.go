package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/nvcf/conformance/wire/reason"
	stargatepb "github.com/nvcf/conformance/wire/stargatepb"
)

// fakeStargate answers WatchStargates with one replica and acks
// registrations whose :authority ends in ".sg.test", like the router.
type fakeStargate struct {
	stargatepb.UnimplementedStargateControlPlaneServer
	mu          sync.Mutex
	authorities []string
	// refusal, when set, ends every registration with a valid authority.
	refusal error
}

func (f *fakeStargate) WatchStargates(_ *stargatepb.WatchStargatesRequest, s grpc.ServerStreamingServer[stargatepb.WatchStargatesResponse]) error {
	return s.Send(&stargatepb.WatchStargatesResponse{Stargates: []*stargatepb.StargateInfo{{StargateId: "sg-0", AdvertiseAddr: "sg-0.sg.test:50071"}}})
}

func (f *fakeStargate) RegisterInferenceServer(s grpc.BidiStreamingServer[stargatepb.InferenceServerRegistration, stargatepb.InferenceServerAck]) error {
	md, _ := metadata.FromIncomingContext(s.Context())
	auth := strings.Join(md.Get(":authority"), ",")
	f.mu.Lock()
	f.authorities = append(f.authorities, auth)
	refusal := f.refusal
	f.mu.Unlock()
	if !strings.HasSuffix(strings.Split(auth, ":")[0], ".sg.test") {
		return reason.Status(codes.InvalidArgument, reason.InvalidAuthority, reason.OriginRouter, fmt.Sprintf("registration requires a target stargate authority, got %q", auth))
	}
	if refusal != nil {
		return refusal
	}
	if err := s.SendHeader(metadata.Pairs("x-stargate-registration-heartbeat-ms", "50")); err != nil {
		return err
	}
	for {
		reg, err := s.Recv()
		if err != nil {
			return nil
		}
		if err := s.Send(&stargatepb.InferenceServerAck{ReverseTunnelTarget: reg.GetInferenceServerId()}); err != nil {
			return err
		}
	}
}

// serveGRPC starts a gRPC server (TLS with cert, or plaintext when cert is
// nil) on loopback and returns its address.
func serveGRPC(t *testing.T, cert *tls.Certificate) (string, *fakeStargate) {
	t.Helper()
	var opts []grpc.ServerOption
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{*cert}})))
	}
	s := grpc.NewServer(opts...)
	f := &fakeStargate{}
	stargatepb.RegisterStargateControlPlaneServer(s, f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return ln.Addr().String(), f
}

func TestGRPCClassification(t *testing.T) {
	ca, other := newTestCA(t, "root"), newTestCA(t, "other root")
	good := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	expired := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Now().Add(-time.Hour), "ingress.test")
	tlsAddr, _ := serveGRPC(t, &good)
	expiredAddr, _ := serveGRPC(t, &expired)
	plainAddr, _ := serveGRPC(t, nil)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedAddr := closed.Addr().String()
	closed.Close()

	for _, tc := range []struct {
		name string
		addr string
		tls  TLS
		want reason.Reason
	}{
		{"verified", tlsAddr, TLS{Roots: ca.pool(), ServerName: "ingress.test"}, reason.None},
		{"wrong root", tlsAddr, TLS{Roots: other.pool(), ServerName: "ingress.test"}, reason.UnknownAuthority},
		{"wrong host", tlsAddr, TLS{Roots: ca.pool(), ServerName: "elsewhere.test"}, reason.HostnameMismatch},
		{"expired", expiredAddr, TLS{Roots: ca.pool(), ServerName: "ingress.test"}, reason.Expired},
		{"no trust", tlsAddr, TLS{ServerName: "ingress.test"}, reason.NoTrust},
		{"plaintext to TLS", tlsAddr, TLS{Plaintext: true}, reason.PlaintextToTLS},
		{"TLS to plaintext", plainAddr, TLS{Roots: ca.pool(), ServerName: "ingress.test"}, reason.PlaintextToTLS},
		{"plaintext to plaintext", plainAddr, TLS{Plaintext: true}, reason.None},
		{"refused", refusedAddr, TLS{Roots: ca.pool(), ServerName: "ingress.test"}, reason.ConnectionRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{Timeout: 5 * time.Second})
			resp, err := p.Watch(context.Background(), GRPCTarget{Addr: tc.addr, Authority: "sg-0.sg.test:50071", TLS: tc.tls})
			require.Equal(t, tc.want, Classify(err), "error: %v", err)
			if tc.want == reason.None {
				require.Len(t, resp.GetStargates(), 1)
			}
			tr := p.Transcript()
			require.Len(t, tr, 1)
			require.Equal(t, tc.want, tr[0].Reason)
		})
	}
}

func TestRegisterKeepsAuthorityApartFromTLSName(t *testing.T) {
	ca := newTestCA(t, "root")
	cert := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	addr, f := serveGRPC(t, &cert)
	p := New(Options{})
	target := GRPCTarget{Addr: addr, Authority: "https://sg-1.sg.test:50071", TLS: TLS{Roots: ca.pool(), ServerName: "ingress.test"}}
	reg, err := p.Register(context.Background(), target, &stargatepb.InferenceServerRegistration{InferenceServerId: "rogue-1"})
	require.NoError(t, err)
	require.Equal(t, "rogue-1", reg.Ack.GetReverseTunnelTarget())
	require.Equal(t, 50*time.Millisecond, reg.Heartbeat)
	reg.Close()
	f.mu.Lock()
	require.Equal(t, []string{"sg-1.sg.test:50071"}, f.authorities)
	f.mu.Unlock()

	target.Authority = "" // the dial address: no Stargate identity
	_, err = p.Register(context.Background(), target, &stargatepb.InferenceServerRegistration{InferenceServerId: "rogue-2"})
	r, o := Refusal(err)
	require.Equal(t, reason.InvalidAuthority, r, "error: %v", err)
	require.Equal(t, reason.OriginRouter, o, "error: %v", err)
}

// The probe classifies a gRPC refusal by the reason and origin its status
// details name, never by its code: Stargate's InvalidArgument for a
// malformed registration is not the router's invalid-authority, and an
// Unavailable without details (any outage) is not a typed refusal.
func TestRegisterClassifiesByStatusDetails(t *testing.T) {
	ca := newTestCA(t, "root")
	cert := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	addr, f := serveGRPC(t, &cert)
	p := New(Options{Timeout: 5 * time.Second})
	target := GRPCTarget{Addr: addr, Authority: "sg-1.sg.test:50071", TLS: TLS{Roots: ca.pool(), ServerName: "ingress.test"}}
	cases := []struct {
		refusal error
		reason  reason.Reason
		origin  reason.Origin
	}{
		{reason.Status(codes.InvalidArgument, reason.InvalidRegistration, reason.OriginStargate, "registration without inference_server_id"), reason.InvalidRegistration, reason.OriginStargate},
		{reason.Status(codes.Unavailable, reason.NoSuchPod, reason.OriginRouter, "no endpoint"), reason.NoSuchPod, reason.OriginRouter},
		{reason.Status(codes.Unavailable, reason.NotReady, reason.OriginRouter, "not ready"), reason.NotReady, reason.OriginRouter},
		{reason.Status(codes.Unavailable, reason.BackendUnreachable, reason.OriginRouter, "unreachable"), reason.BackendUnreachable, reason.OriginRouter},
		{status.Error(codes.InvalidArgument, "invalid-authority"), reason.Unknown, ""},
		{status.Error(codes.Unavailable, "stargate is not ready"), reason.Unknown, ""},
	}
	for _, tc := range cases {
		f.mu.Lock()
		f.refusal = tc.refusal
		f.mu.Unlock()
		_, err := p.Register(context.Background(), target, &stargatepb.InferenceServerRegistration{InferenceServerId: "rogue"})
		r, o := Refusal(err)
		require.Equal(t, tc.reason, r, "%v", err)
		require.Equal(t, tc.origin, o, "%v", err)
		require.Equal(t, tc.origin, reason.OriginOf(err), "the returned error carries the origin: %v", err)
	}
}

func TestWatchUntilTimesOut(t *testing.T) {
	ca := newTestCA(t, "root")
	cert := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	addr, _ := serveGRPC(t, &cert)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := New(Options{}).WatchUntil(ctx, GRPCTarget{Addr: addr, TLS: TLS{Roots: ca.pool(), ServerName: "ingress.test"}},
		func(r *stargatepb.WatchStargatesResponse) bool { return len(r.Stargates) == 2 })
	require.Error(t, err)
	require.Contains(t, err.Error(), "sg-0", "the error names the last response seen")
}

func TestPeerCertificate(t *testing.T) {
	ca, other := newTestCA(t, "root"), newTestCA(t, "other root")
	good := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	addr, _ := serveGRPC(t, &good)
	p := New(Options{Timeout: 5 * time.Second})

	leaf, err := p.PeerCertificate(context.Background(), GRPCTarget{Addr: addr, TLS: TLS{Roots: ca.pool(), ServerName: "ingress.test"}})
	require.NoError(t, err)
	require.Equal(t, good.Certificate[0], leaf.Raw, "the served leaf")

	_, err = p.PeerCertificate(context.Background(), GRPCTarget{Addr: addr, TLS: TLS{Roots: other.pool(), ServerName: "ingress.test"}})
	require.Equal(t, reason.UnknownAuthority, Classify(err), "error: %v", err)
}

// A refusal often ends the stream before the registration is sent; the
// probe must still report the status the server sent, not Send's io.EOF.
func TestRegisterRefusalRacingTheSend(t *testing.T) {
	ca := newTestCA(t, "root")
	cert := ca.leaf(t, x509.ExtKeyUsageServerAuth, time.Time{}, "ingress.test")
	addr, _ := serveGRPC(t, &cert)
	p := New(Options{Timeout: 5 * time.Second})
	target := GRPCTarget{Addr: addr, Authority: "198-18-10-2.elsewhere.test:50071", TLS: TLS{Roots: ca.pool(), ServerName: "ingress.test"}}
	for i := range 200 {
		_, err := p.Register(context.Background(), target, &stargatepb.InferenceServerRegistration{InferenceServerId: "rogue"})
		require.Equal(t, reason.InvalidAuthority, Classify(err), "attempt %d: %v", i, err)
		require.Equal(t, reason.OriginRouter, reason.OriginOf(err), "attempt %d: %v", i, err)
	}
}

type fakeModels struct {
	stargatepb.UnimplementedStargateModelDiscoveryServer
}

func (fakeModels) ListModels(_ context.Context, req *stargatepb.ListModelsRequest) (*stargatepb.ListModelsResponse, error) {
	var out []string
	for _, id := range req.GetModelIds() {
		if id == "echo" {
			out = append(out, id)
		}
	}
	return &stargatepb.ListModelsResponse{ModelIds: out}, nil
}

func TestListModels(t *testing.T) {
	s := grpc.NewServer()
	stargatepb.RegisterStargateModelDiscoveryServer(s, fakeModels{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	p := New(Options{Timeout: 5 * time.Second})
	models, err := p.ListModels(context.Background(), GRPCTarget{Addr: ln.Addr().String(), TLS: TLS{Plaintext: true}}, []string{"echo", "zz"})
	require.NoError(t, err)
	require.Equal(t, []string{"echo"}, models)

	_, err = p.ListModels(context.Background(), GRPCTarget{Addr: "127.0.0.1:1", TLS: TLS{Plaintext: true}}, nil)
	require.Equal(t, reason.ConnectionRefused, Classify(err), "error: %v", err)
	require.Len(t, p.Transcript(), 2)
}
