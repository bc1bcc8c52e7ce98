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

	"github.com/nvcf/conformance/wire/reason"
)

// Classify returns the typed reason of a probe's failure (Refusal without
// its origin).
func Classify(err error) reason.Reason {
	r, _ := Refusal(err)
	return r
}

// Refusal returns the typed reason of a probe's failure and who refused,
// from the error values themselves: the reason and origin a gRPC status
// names in its details, or a real component's status by its code and
// whole message (reason.FromStatus; the code alone names nothing: the
// router and Stargate both answer InvalidArgument, for different
// reasons), a reason already attached, an x509 verification
// error (the probe refused), a TLS record from a plaintext peer or a TLS
// alert the peer sent (the peer refused), the reason.Message a QUIC peer
// closed the connection with, a QUIC crypto error, a refused
// connection, a timeout. Anything else is reason.Unknown; nil is
// reason.None.
func Refusal(err error) (reason.Reason, reason.Origin) {
	if err == nil {
		return reason.None, ""
	}
	if r, o, ok := reason.FromStatus(err); ok {
		return r, o
	}
	if r := reason.Of(err); r != reason.Unknown {
		return r, reason.OriginOf(err)
	}
	if r, o := classifyTLS(err); r != reason.None {
		return r, o
	}
	var ae *quic.ApplicationError
	if errors.As(err, &ae) {
		if m, ok := closeRefusal(ae); ok {
			return m.Reason, m.Origin
		}
	}
	var te *quic.TransportError
	if errors.As(err, &te) && te.ErrorCode.IsCryptoError() {
		if r := classifyAlert(uint8(te.ErrorCode-0x100), te.Remote); r != reason.None {
			return r, reason.OriginPeer
		}
	}
	var hte *quic.HandshakeTimeoutError
	var ite *quic.IdleTimeoutError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return reason.ConnectionRefused, reason.OriginPeer
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &hte), errors.As(err, &ite):
		return reason.Timeout, ""
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.DeadlineExceeded {
		return reason.Timeout, ""
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return reason.Timeout, ""
	}
	return reason.Unknown, ""
}

// classifyTLS maps verification errors (the probe refused), plaintext
// records and remote alerts (the peer refused).
func classifyTLS(err error) (reason.Reason, reason.Origin) {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	switch {
	case errors.As(err, &ua):
		return reason.UnknownAuthority, reason.OriginProbe
	case errors.As(err, &he):
		return reason.HostnameMismatch, reason.OriginProbe
	case errors.As(err, &ci):
		if ci.Reason == x509.Expired {
			return reason.Expired, reason.OriginProbe
		}
		return reason.BadCertificate, reason.OriginProbe
	case errors.As(err, &rh):
		return reason.PlaintextToTLS, reason.OriginPeer
	case errors.As(err, &ae):
		return classifyAlert(uint8(ae), true), reason.OriginPeer
	}
	// crypto/tls reports an alert received over TCP as a *net.OpError with
	// Op "remote error" around an unexported alert type; compare it with
	// the exported AlertError of the same code.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil {
		for _, a := range reason.Alerts {
			if oe.Err.Error() == tls.AlertError(a).Error() {
				return classifyAlert(a, true), reason.OriginPeer
			}
		}
	}
	return reason.None, ""
}

// classifyAlert maps a TLS alert the peer sent, each to its own reason
// (reason.OfAlert). Local alerts were already classified from the
// verification error they carry.
func classifyAlert(a uint8, remote bool) reason.Reason {
	if !remote {
		return reason.None
	}
	if r := reason.OfAlert(a); r != reason.Unknown {
		return r
	}
	return reason.None
}

// classified wraps err with its reason and origin, falling back to
// fallback when the error itself names none (fallback comes from sniffing
// the peer, or from the message a peer closed a QUIC connection with).
func classified(err error, fallback reason.Message) error {
	if err == nil {
		return nil
	}
	r, o := Refusal(err)
	if r == reason.Unknown && fallback.Reason != reason.None {
		r, o = fallback.Reason, fallback.Origin
	}
	var re *reason.Error
	if errors.As(err, &re) && re.Reason == r && re.Origin == o {
		return err
	}
	return reason.WrapFrom(r, o, err)
}

// fromPeer is what sniffing found: r (PlaintextToTLS, say) refused by the
// peer, or nothing.
func fromPeer(r reason.Reason) reason.Message {
	if r == reason.None {
		return reason.Message{}
	}
	return reason.Message{Reason: r, Origin: reason.OriginPeer}
}
