package reason

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClassifyTyped(t *testing.T) {
	cases := []struct {
		err error
		r   Reason
	}{
		{nil, None},
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, UnknownAuthority},
		{fmt.Errorf("dial: %w", x509.HostnameError{Host: "x", Certificate: &x509.Certificate{DNSNames: []string{"y"}}}), HostnameMismatch},
		{x509.HostnameError{Host: "x", Certificate: &x509.Certificate{Subject: pkix.Name{CommonName: "x"}}}, BadCertificate},
		{errors.New("x509: certificate relies on legacy Common Name field, use SANs instead"), BadCertificate},
		{x509.CertificateInvalidError{Reason: x509.Expired}, Expired},
		{x509.CertificateInvalidError{Reason: x509.IncompatibleUsage}, BadCertificate},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, PlaintextToTLS},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ConnectionRefused},
		{Wrap(SchemeRequired, errors.New("x")), SchemeRequired},
		{errors.New("something odd"), Unknown},
	}
	for _, tc := range cases {
		require.Equal(t, tc.r, Classify(tc.err), "%v", tc.err)
	}
}

func TestClassifyGRPCStatus(t *testing.T) {
	hs := "connection error: desc = \"transport: authentication handshake failed: tls: failed to verify certificate: "
	cases := []struct {
		err error
		tls bool
		r   Reason
	}{
		{Status(codes.InvalidArgument, InvalidAuthority, OriginRouter, "registration requires a target stargate authority"), true, InvalidAuthority},
		{Status(codes.InvalidArgument, InvalidRegistration, OriginStargate, "registration without inference_server_id"), true, InvalidRegistration},
		// A real router's text is typed whole, under its code (RealRefusals).
		{status.Error(codes.InvalidArgument, "registration requires a target stargate authority"), true, InvalidAuthority},
		{status.Error(codes.Unavailable, "target stargate sg-1 is not ready"), true, NotReady},
		{status.Error(codes.InvalidArgument, "proxy: registration requires a target stargate authority"), true, Unknown},
		{Status(codes.Unavailable, NotReady, OriginRouter, "stargate sg-1 is not ready"), true, NotReady},
		{status.Error(codes.Unavailable, hs+"x509: certificate signed by unknown authority\""), true, UnknownAuthority},
		{status.Error(codes.Unavailable, hs+"x509: certificate is valid for a.test, not b.test\""), true, HostnameMismatch},
		{status.Error(codes.Unavailable, hs+"x509: cannot validate certificate for 198.18.0.1 because it doesn't contain any IP SANs\""), true, HostnameMismatch},
		{status.Error(codes.Unavailable, hs+"x509: certificate has expired or is not yet valid: current time\""), true, Expired},
		{status.Error(codes.Unavailable, "connection error: desc = \"transport: authentication handshake failed: tls: first record does not look like a TLS handshake\""), true, PlaintextToTLS},
		{status.Error(codes.Unavailable, "connection error: desc = \"error reading server preface: EOF\""), false, PlaintextToTLS},
		{status.Error(codes.Unavailable, "connection error: desc = \"error reading server preface: EOF\""), true, Unavailable},
		{status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused\""), true, ConnectionRefused},
		{status.Error(codes.Unavailable, "stargate sg-1 is not ready"), true, Unavailable},
		{status.Error(codes.DeadlineExceeded, "late"), true, Timeout},
		{status.Error(codes.Internal, "boom"), true, Unknown},
	}
	for _, tc := range cases {
		require.Equal(t, tc.r, ClassifyDial(tc.err, tc.tls), "%v", tc.err)
	}
}
