package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/quic-go/quic-go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nvcf/conformance/fixtures/wire/reason"
)

// TLS alerts that name a reason (RFC 8446 §6).
const (
	alertBadCertificate     = 42
	alertCertificateExpired = 45
	alertUnknownCA          = 48
	alertUnrecognizedName   = 112
	alertCertRequired       = 116
)

// Classify returns the typed reason of a probe's failure, from the error
// values themselves (never from their text): a reason already attached, an
// x509 verification error, a TLS record from a plaintext peer, a TLS alert
// sent by the peer, a QUIC crypto error, a refused connection, a timeout,
// or a gRPC status code the router uses for refusals. Anything else is
// reason.Unknown; nil is reason.None.
func Classify(err error) reason.Reason {
	if err == nil {
		return reason.None
	}
	if r := reason.Of(err); r != reason.Unknown {
		return r
	}
	if r := classifyTLS(err); r != reason.None {
		return r
	}
	var te *quic.TransportError
	if errors.As(err, &te) && te.ErrorCode.IsCryptoError() {
		if r := classifyAlert(uint8(te.ErrorCode-0x100), te.Remote); r != reason.None {
			return r
		}
	}
	var hte *quic.HandshakeTimeoutError
	var ite *quic.IdleTimeoutError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return reason.ConnectionRefused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &hte), errors.As(err, &ite):
		return reason.Timeout
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.InvalidArgument:
			return reason.InvalidAuthority
		case codes.DeadlineExceeded:
			return reason.Timeout
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return reason.Timeout
	}
	return reason.Unknown
}

// classifyTLS maps verification errors, plaintext records and remote alerts.
func classifyTLS(err error) reason.Reason {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	switch {
	case errors.As(err, &ua):
		return reason.UnknownAuthority
	case errors.As(err, &he):
		return reason.HostnameMismatch
	case errors.As(err, &ci):
		if ci.Reason == x509.Expired {
			return reason.Expired
		}
		return reason.BadCertificate
	case errors.As(err, &rh):
		return reason.PlaintextToTLS
	case errors.As(err, &ae):
		return classifyAlert(uint8(ae), true)
	}
	// crypto/tls reports an alert received over TCP as a *net.OpError with
	// Op "remote error" around an unexported alert type; compare it with
	// the exported AlertError of the same code.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil {
		for _, a := range []uint8{alertBadCertificate, alertCertificateExpired, alertUnknownCA, alertUnrecognizedName, alertCertRequired} {
			if oe.Err.Error() == tls.AlertError(a).Error() {
				return classifyAlert(a, true)
			}
		}
	}
	return reason.None
}

// classifyAlert maps a TLS alert. Alerts the peer sent about our client
// certificate or our SNI name a reason; local alerts were already
// classified from the verification error they carry.
func classifyAlert(a uint8, remote bool) reason.Reason {
	if !remote {
		return reason.None
	}
	switch a {
	case alertCertRequired:
		return reason.ClientCertRequired
	case alertUnknownCA, alertBadCertificate:
		return reason.UntrustedClientCert
	case alertCertificateExpired:
		return reason.Expired
	case alertUnrecognizedName:
		return reason.UnknownSNI
	}
	return reason.None
}

// classified wraps err with its reason, falling back to fallback when the
// error itself names none (fallback comes from sniffing the peer).
func classified(err error, fallback reason.Reason) error {
	if err == nil {
		return nil
	}
	r := Classify(err)
	if r == reason.Unknown && fallback != reason.None {
		r = fallback
	}
	var re *reason.Error
	if errors.As(err, &re) && re.Reason == r {
		return err
	}
	return reason.Wrap(r, err)
}
