package probe

import (
	"context"
	"net"

	"google.golang.org/grpc/credentials"
)

// recordingCreds are gRPC transport credentials that keep the TLS name
// apart from the :authority (grpc-go would verify the certificate against
// the authority otherwise) and record the handshake's own error. With a nil
// inner they speak plaintext h2c, deliberately.
type recordingCreds struct {
	inner      credentials.TransportCredentials // nil: plaintext
	serverName string
	rec        *connRecord
}

var _ credentials.TransportCredentials = (*recordingCreds)(nil)

func (c *recordingCreds) ClientHandshake(ctx context.Context, _ string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	c.rec.mu.Lock()
	c.rec.dialed = true
	c.rec.mu.Unlock()
	conn := net.Conn(&recordingConn{Conn: raw, rec: c.rec})
	if c.inner == nil {
		c.rec.mu.Lock()
		c.rec.handshake = true
		c.rec.mu.Unlock()
		return conn, plaintextInfo{}, nil
	}
	out, info, err := c.inner.ClientHandshake(ctx, c.serverName, conn)
	if err != nil {
		c.rec.setErr(err)
		return nil, nil, err
	}
	c.rec.mu.Lock()
	c.rec.handshake = true
	c.rec.mu.Unlock()
	return out, info, nil
}

func (c *recordingCreds) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errClientOnly
}

func (c *recordingCreds) Info() credentials.ProtocolInfo {
	if c.inner == nil {
		return credentials.ProtocolInfo{SecurityProtocol: "plaintext"}
	}
	// No ServerName here: grpc-go would insist that it equals the
	// :authority, which is exactly what the probe keeps apart.
	info := c.inner.Info()
	info.ServerName = ""
	return info
}

func (c *recordingCreds) Clone() credentials.TransportCredentials {
	cp := *c
	if c.inner != nil {
		cp.inner = c.inner.Clone()
	}
	return &cp
}

func (c *recordingCreds) OverrideServerName(string) error { return nil }

// plaintextInfo is the AuthInfo of a deliberate plaintext connection.
type plaintextInfo struct{ credentials.CommonAuthInfo }

func (plaintextInfo) AuthType() string { return "plaintext" }

type clientOnly string

func (e clientOnly) Error() string { return string(e) }

const errClientOnly = clientOnly("probe credentials are client-side only")
