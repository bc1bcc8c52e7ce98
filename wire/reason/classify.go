package reason

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Classify maps a connection or RPC error to a typed reason. Typed errors
// are matched first (x509.UnknownAuthorityError → unknown-authority,
// x509.HostnameError → hostname-mismatch, x509.CertificateInvalidError with
// reason Expired → expired and with other reasons → bad-certificate,
// tls.RecordHeaderError → plaintext-to-tls, refused connections, deadlines, a
// carried *Error). A gRPC status whose details name a reason
// (Status: the reference router's and Stargate's refusals), or
// whose code and whole message are a real component's refusal
// (RealRefusals), has that reason; the code alone names none. A status without one, whose cause arrives as
// text, is classified by the TLS or network failure its message names
// (grpc-go's own transport errors), else unavailable for Unavailable.
// Anything else is Unknown; nil is None.
func Classify(err error) Reason {
	return ClassifyDial(err, true)
}

// ClassifyDial is Classify for a dial made with TLS (tlsDial) or in
// plaintext. A plaintext dial whose connection closes before the server's
// HTTP/2 preface hit a TLS-only port: plaintext-to-tls.
func ClassifyDial(err error, tlsDial bool) Reason {
	if err == nil {
		return None
	}
	if r, _, ok := FromStatus(err); ok {
		return r
	}
	if r := typed(err); r != Unknown {
		return r
	}
	st, ok := status.FromError(err)
	if !ok {
		return fromText(err.Error(), tlsDial)
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		return Timeout
	case codes.Unavailable:
		if r := fromText(st.Message(), tlsDial); r != Unknown {
			return r
		}
		return Unavailable
	}
	return Unknown
}

func typed(err error) Reason {
	var re *Error
	if errors.As(err, &re) {
		return re.Reason
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		return UnknownAuthority
	}
	var he x509.HostnameError
	if errors.As(err, &he) {
		if c := he.Certificate; c != nil && len(c.DNSNames) == 0 && len(c.IPAddresses) == 0 && len(c.URIs) == 0 {
			// A CN-only certificate is unfit for any name, not merely for this one.
			return BadCertificate
		}
		return HostnameMismatch
	}
	var ci x509.CertificateInvalidError
	if errors.As(err, &ci) {
		if ci.Reason == x509.Expired {
			return Expired
		}
		return BadCertificate
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return PlaintextToTLS
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return ConnectionRefused
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return Timeout
	}
	return Unknown
}

// textual causes, as grpc-go and crypto/tls print them, most specific first.
var texts = []struct {
	substr string
	r      Reason
}{
	{"certificate signed by unknown authority", UnknownAuthority},
	{"certificate relies on legacy Common Name field", BadCertificate},
	{"x509: certificate is valid for", HostnameMismatch},
	{"x509: certificate is not valid for any names", HostnameMismatch},
	// An IP dialled, a certificate naming hosts only: x509.HostnameError's text for an IP.
	{"because it doesn't contain any IP SANs", HostnameMismatch},
	{"certificate has expired or is not yet valid", Expired},
	{"first record does not look like a TLS handshake", PlaintextToTLS},
	{"server gave HTTP response", PlaintextToTLS},
	{"tls: no application protocol", PlaintextToTLS},
	{"missing selected ALPN property", PlaintextToTLS},
	{"x509:", BadCertificate},
	{"connection refused", ConnectionRefused},
	{"i/o timeout", Timeout},
	{"context deadline exceeded", Timeout},
}

// plaintextCloses are what a plaintext HTTP/2 client sees when a TLS
// listener drops its connection on the first bytes.
var plaintextCloses = []string{"server preface", "EOF", "connection reset by peer", "broken pipe", "frame too large"}

func fromText(msg string, tlsDial bool) Reason {
	for _, t := range texts {
		if strings.Contains(msg, t.substr) {
			return t.r
		}
	}
	if !tlsDial {
		for _, s := range plaintextCloses {
			if strings.Contains(msg, s) {
				return PlaintextToTLS
			}
		}
	}
	return Unknown
}
