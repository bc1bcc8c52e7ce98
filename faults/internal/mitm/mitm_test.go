package mitm

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

func start(t *testing.T, cfg Config) string {
	addr, _ := startServer(t, cfg)
	return addr
}

func startServer(t *testing.T, cfg Config) (string, *Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.Listener = l
	s, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return l.Addr().String(), s
}

// tlsDial is a correct client: it verifies against a pool that trusts
// nothing here, and must fail before trust even matters.
func tlsDial(addr string) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 20 * time.Second}, "tcp", addr, &tls.Config{
		ServerName: "stargate.region-a.nvcf.test",
		RootCAs:    x509.NewCertPool(),
		NextProtos: []string{"h2"},
		MinVersion: tls.VersionTLS12,
	})
	if c != nil {
		_ = c.Close()
	}
	return err
}

func TestH2CAnswerIsRefusedByTLSClient(t *testing.T) {
	addr, s := startServer(t, Config{Mode: H2C})
	err := tlsDial(addr)
	var rh tls.RecordHeaderError
	require.ErrorAs(t, err, &rh, "a TLS client must see plaintext, got %v", err)
	require.Zero(t, s.Plaintext(), "a client that refused the downgrade is not counted as accepting it")

	// And it is a real h2c server: a cleartext HTTP/2 client gets an answer.
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: nil}
	tr.DialTLS = func(network, a string, _ *tls.Config) (net.Conn, error) { return net.Dial(network, addr) }
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Get("http://stargate/")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor)
	require.Equal(t, uint64(1), s.Plaintext(), "the cleartext client went on over the downgraded channel")
}

func TestStripRelaysToPlaintextUpstream(t *testing.T) {
	// The plaintext upstream: an h2c server, like the router's port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h2c.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), &http2.Server{}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	addr := start(t, Config{Mode: Strip, PlainUpstream: l.Addr().String()})
	err = tlsDial(addr)
	var rh tls.RecordHeaderError
	require.ErrorAs(t, err, &rh, "a TLS client must see plaintext, got %v", err)
}

func TestConfigErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = Start(Config{Listener: l, Mode: Strip})
	require.ErrorContains(t, err, "PlainUpstream is required")
	_, err = Start(Config{Listener: l, Mode: "ssl2"})
	require.ErrorContains(t, err, "want h2c or strip")
}
