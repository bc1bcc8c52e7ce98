package reason_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nvcf/conformance/wire/reason"
)

func TestOriginTravelsWithTheReason(t *testing.T) {
	err := fmt.Errorf("register: %w", reason.WrapFrom(reason.InvalidAuthority, reason.OriginRouter, errors.New("no match")))
	require.Equal(t, reason.InvalidAuthority, reason.Of(err))
	require.Equal(t, reason.OriginRouter, reason.OriginOf(err))
	require.Equal(t, reason.Origin(""), reason.OriginOf(reason.Wrap(reason.Timeout, errors.New("slow"))))
	require.Equal(t, reason.Origin(""), reason.OriginOf(errors.New("plain")))
}

func TestStatusDetailsCarryReasonAndOrigin(t *testing.T) {
	err := reason.Status(codes.InvalidArgument, reason.InvalidRegistration, reason.OriginStargate, "registration without inference_server_id")
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	r, o, ok := reason.FromStatus(fmt.Errorf("wrapped: %w", err))
	require.True(t, ok)
	require.Equal(t, reason.InvalidRegistration, r)
	require.Equal(t, reason.OriginStargate, o)

	// The same code without details names nothing: the code alone is no reason.
	_, _, ok = reason.FromStatus(status.Error(codes.InvalidArgument, string(reason.InvalidAuthority)))
	require.False(t, ok)
	_, _, ok = reason.FromStatus(errors.New("invalid-authority"))
	require.False(t, ok)
}

func TestMessageRoundTrips(t *testing.T) {
	m := reason.MessageOf(reason.Wrap(reason.NoTrust, errors.New("trust bundle /etc/nvcf/trust/ca.pem: no such file")), reason.OriginPylon)
	require.Equal(t, reason.Message{Reason: reason.NoTrust, Origin: reason.OriginPylon, Detail: "no-trust: trust bundle /etc/nvcf/trust/ca.pem: no such file"}, m)
	got, err := reason.ParseMessage(m.Encode())
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.Equal(t, reason.OriginPylon, reason.OriginOf(got.Err()))

	// An origin the error names wins over the role's.
	require.Equal(t, reason.OriginRouter, reason.MessageOf(reason.WrapFrom(reason.NotReady, reason.OriginRouter, errors.New("x")), reason.OriginPylon).Origin)
	// An error without a reason is reported as unknown, never guessed.
	require.Equal(t, reason.Unknown, reason.MessageOf(errors.New("panic: no-trust"), reason.OriginPylon).Reason)
}

func TestMessageIsBounded(t *testing.T) {
	m := reason.Message{Reason: reason.NoTrust, Origin: reason.OriginStargate, Detail: strings.Repeat("é", 3000)}
	enc := m.Encode()
	require.LessOrEqual(t, len(enc), reason.MaxMessage)
	got, err := reason.ParseMessage(enc)
	require.NoError(t, err)
	require.Equal(t, reason.NoTrust, got.Reason)
}

// A log line or free text that happens to name a reason is no typed refusal.
func TestParseMessageRefusesText(t *testing.T) {
	for _, s := range []string{
		"",
		`nvcf-ref: no-trust: trust bundle missing`,
		`{"level":"ERROR","msg":"refused","reason":"no-trust"}`,
		`{"reason":"no-trust"}`,
		`{"origin":"pylon"}`,
	} {
		_, err := reason.ParseMessage(s)
		require.Error(t, err, "%q", s)
	}
}
