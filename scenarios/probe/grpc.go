package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/nvcf/conformance/fixtures/stargate"
	"github.com/nvcf/conformance/wire/reason"
	stargatepb "github.com/nvcf/conformance/wire/stargatepb"
)

// GRPCTarget is where and how a gRPC probe dials.
type GRPCTarget struct {
	// Addr is the host:port dialled (an external name, resolved through the
	// environment's DNS, or an IP).
	Addr string
	// Authority is the HTTP/2 :authority (the Stargate identity the router
	// routes on); empty means Addr. It never changes the TLS name.
	Authority string
	// TLS secures the connection; its ServerName (default: Addr's host) is
	// what the certificate must cover.
	TLS TLS
	// Token, when set, goes with RegisterInferenceServer as gRPC metadata
	// "authorization: Bearer <token>", as NVCF's Pylon sends its worker
	// token (its Stargate checks it through --worker-auth-endpoint); the
	// other calls carry none, as there.
	Token string
}

func (t GRPCTarget) describe() string {
	a := t.Authority
	if a == "" {
		a = t.Addr
	}
	return fmt.Sprintf("%s authority=%s %s", t.Addr, a, t.TLS.describe())
}

// grpcConn is one probe's client connection and what it saw.
type grpcConn struct {
	cc  *grpc.ClientConn
	rec *connRecord
}

func (p *Prober) dialGRPC(t GRPCTarget) (*grpcConn, error) {
	host, _, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, fmt.Errorf("gRPC target %q: %w (want host:port)", t.Addr, err)
	}
	rec := &connRecord{}
	creds := &recordingCreds{rec: rec}
	if !t.TLS.Plaintext {
		cfg, err := t.TLS.config(host, "h2")
		if err != nil {
			return nil, err
		}
		creds.inner = credentials.NewTLS(cfg)
		creds.serverName = cfg.ServerName
	}
	authority := stripScheme(t.Authority)
	if authority == "" {
		authority = t.Addr
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := p.dialTCP(ctx, addr)
			if err != nil {
				rec.setErr(err)
			}
			return c, err
		}),
		grpc.WithAuthority(authority),
	}
	cc, err := grpc.NewClient("passthrough:///"+t.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("gRPC client for %s: %w", t.Addr, err)
	}
	return &grpcConn{cc: cc, rec: rec}, nil
}

// fail turns a call's error into a classified error that names the target
// and the deeper cause the connection recorded. A status without a typed
// reason in its details stays unknown whatever its code: an Unavailable
// after the handshake may be any outage, not the refusal a case expects.
func (p *Prober) fail(ctx context.Context, op string, t GRPCTarget, c *grpcConn, err error) error {
	cause, sniffed := p.explain(ctx, c.rec, t.Addr, t.TLS.Plaintext)
	if cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (connection: %w)", err, cause)
	}
	return classified(fmt.Errorf("%s %s: %w", op, t.describe(), err), fromPeer(sniffed))
}

// Watch calls WatchStargates and returns the first response.
func (p *Prober) Watch(ctx context.Context, t GRPCTarget) (*stargatepb.WatchStargatesResponse, error) {
	return p.WatchUntil(ctx, t, nil)
}

// WatchUntil calls WatchStargates and returns the first response for which
// done returns true (nil: the first response). It fails when the stream
// ends or ctx expires first; the error then carries the last response seen.
func (p *Prober) WatchUntil(ctx context.Context, t GRPCTarget, done func(*stargatepb.WatchStargatesResponse) bool) (resp *stargatepb.WatchStargatesResponse, err error) {
	err = p.unary(ctx, "grpc.watch", t, func(ctx context.Context, c *grpcConn) error {
		stream, err := stargatepb.NewStargateControlPlaneClient(c.cc).WatchStargates(ctx, &stargatepb.WatchStargatesRequest{})
		if err != nil {
			return p.fail(ctx, "watch", t, c, err)
		}
		for {
			r, err := stream.Recv()
			if err != nil {
				if resp != nil {
					err = fmt.Errorf("%w; last response: %v", err, resp)
				}
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("watch stream ended: %w", err)
				}
				return p.fail(ctx, "watch", t, c, err)
			}
			resp = r
			if done == nil || done(r) {
				return nil
			}
		}
	})
	return resp, err
}

// ListModels calls StargateModelDiscovery.ListModels (model_ids = ids; none
// asks for every model) and returns the model ids of the answer.
func (p *Prober) ListModels(ctx context.Context, t GRPCTarget, ids []string) (models []string, err error) {
	err = p.unary(ctx, "grpc.models", t, func(ctx context.Context, c *grpcConn) error {
		resp, err := stargatepb.NewStargateModelDiscoveryClient(c.cc).ListModels(ctx, &stargatepb.ListModelsRequest{ModelIds: ids})
		if err != nil {
			return p.fail(ctx, "list models", t, c, err)
		}
		models = resp.GetModelIds()
		return nil
	})
	return models, err
}

// unary dials t and runs fn under the Prober's deadline, closing the
// connection afterwards and recording the probe as kind. fn classifies its
// own errors (p.fail).
func (p *Prober) unary(ctx context.Context, kind string, t GRPCTarget, fn func(context.Context, *grpcConn) error) (err error) {
	start := time.Now()
	defer func() { p.record(kind, t.describe(), start, err) }()
	ctx, cancel := p.bound(ctx)
	defer cancel()
	c, err := p.dialGRPC(t)
	if err != nil {
		return err
	}
	defer c.cc.Close()
	return fn(ctx, c)
}

// Registration is a rogue Pylon's live registration stream.
type Registration struct {
	// Ack is Stargate's first acknowledgement.
	Ack *stargatepb.InferenceServerAck
	// Heartbeat is the interval Stargate asked for (header
	// x-stargate-registration-heartbeat-ms), or 5 s when it named none.
	Heartbeat time.Duration

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	conn   *grpcConn
}

// Close ends the registration stream and waits for its heartbeats to stop.
func (r *Registration) Close() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
		r.conn.cc.Close()
	})
}

// RogueRegistration is what the harness's rogue Pylon registers as id:
// the one model given (its own, so a real Stargate's per-model metrics
// and ListModels stand for id), ACTIVE and with stats (a real Stargate
// holds a model without stats inactive), asking for a reverse tunnel.
//
// Always a reverse tunnel: a real Stargate admits an inference_server_url
// of a registration without one only as quic://<IP>:<port> and then dials
// it (crates/stargate/src/control_plane/registration/admission.rs), and
// answers no ack until that connection is up, so a rogue registration
// with an http:// URL, or a quic:// one nobody serves, would be refused
// or left unanswered for a reason of its own, not the one a case is about.
// With a reverse tunnel the URL may be any http(s) URL with a host (and
// a port, or the scheme's default): the probe's names a host under
// .invalid, which nothing ever dials, and the ack comes at once.
func RogueRegistration(id, model string) *stargatepb.InferenceServerRegistration {
	return &stargatepb.InferenceServerRegistration{
		InferenceServerId:  id,
		InferenceServerUrl: "http://" + id + ".probe.invalid:8080",
		ReverseTunnel:      true,
		ClusterId:          "harness-probe",
		Models: map[string]*stargatepb.InferenceServerModelRegistration{
			model: {Status: stargatepb.InferenceServerStatus_INFERENCE_SERVER_STATUS_ACTIVE, Stats: &stargatepb.ModelStats{}},
		},
	}
}

// Register acts as a rogue Pylon: it opens RegisterInferenceServer towards
// t (with t's :authority), sends reg and waits for the first ack. On success
// the stream stays open, re-sending reg at the heartbeat interval, until the
// Registration is closed or ctx ends.
func (p *Prober) Register(ctx context.Context, t GRPCTarget, reg *stargatepb.InferenceServerRegistration) (r *Registration, err error) {
	start := time.Now()
	defer func() { p.record("grpc.register", t.describe()+" server="+reg.GetInferenceServerId(), start, err) }()
	c, err := p.dialGRPC(t)
	if err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// The probe id lets a Stargate's /status count this call apart from
	// those of cases running at the same time.
	call := metadata.AppendToOutgoingContext(life, stargate.ProbeHeader, reg.GetInferenceServerId())
	if t.Token != "" {
		call = metadata.AppendToOutgoingContext(call, "authorization", "Bearer "+t.Token)
	}
	stream, err := stargatepb.NewStargateControlPlaneClient(c.cc).RegisterInferenceServer(call)
	if err == nil {
		if err = stream.Send(reg); errors.Is(err, io.EOF) {
			// The stream ended before our message went out (a refusal
			// that raced the send); its status arrives with Recv.
			if _, rerr := stream.Recv(); rerr != nil {
				err = rerr
			}
		}
	}
	type first struct {
		ack *stargatepb.InferenceServerAck
		err error
	}
	got := make(chan first, 1)
	if err == nil {
		go func() {
			ack, err := stream.Recv()
			got <- first{ack, err}
		}()
		wait, stop := p.bound(ctx)
		select {
		case f := <-got:
			err = f.err
			if err == nil {
				r = &Registration{Ack: f.ack, done: make(chan struct{}), conn: c}
			}
		case <-wait.Done():
			err = wait.Err()
		}
		stop()
	}
	if err != nil {
		cancel()
		defer c.cc.Close()
		return nil, p.fail(ctx, "register", t, c, err)
	}
	r.Heartbeat = 5 * time.Second
	if md, err := stream.Header(); err == nil {
		if v := md.Get(stargate.HeartbeatHeader); len(v) > 0 {
			if ms, err := strconv.Atoi(v[0]); err == nil && ms > 0 {
				r.Heartbeat = time.Duration(ms) * time.Millisecond
			}
		}
	}
	r.cancel = cancel
	go r.beat(life, stream, reg)
	return r, nil
}

// beat re-sends the registration and drains acks until the stream ends.
func (r *Registration) beat(ctx context.Context, stream grpc.BidiStreamingClient[stargatepb.InferenceServerRegistration, stargatepb.InferenceServerAck], reg *stargatepb.InferenceServerRegistration) {
	defer close(r.done)
	go func() {
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(r.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = stream.CloseSend()
			return
		case <-tick.C:
			if err := stream.Send(reg); err != nil {
				return
			}
		}
	}
}

// stripScheme turns an advertised address ("https://a.b:50071") into an
// :authority ("a.b:50071").
func stripScheme(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		addr = addr[i+3:]
	}
	return strings.TrimSuffix(addr, "/")
}

// PeerCertificate completes a verified TLS handshake (ALPN h2) with t and
// returns the leaf the server presented, so that a case can tell which of
// two valid certificates a listener serves. A failed handshake carries its
// reason.
func (p *Prober) PeerCertificate(ctx context.Context, t GRPCTarget) (*x509.Certificate, error) {
	host, _, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", t.Addr, err)
	}
	cfg, err := t.TLS.config(host, "h2")
	if err != nil {
		return nil, err
	}
	raw, err := p.dialTCP(ctx, t.Addr)
	if err != nil {
		return nil, classified(err, reason.Message{})
	}
	c := tls.Client(raw, cfg)
	defer c.Close()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, classified(fmt.Errorf("TLS handshake with %s: %w", t.Addr, err), reason.Message{})
	}
	return c.ConnectionState().PeerCertificates[0], nil
}
