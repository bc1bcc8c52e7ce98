package scenarios

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nvcf/conformance/scenarios/catalog"
	"github.com/nvcf/conformance/wire/reason"
)

func TestJudge(t *testing.T) {
	refused := reason.Wrap(reason.UnknownAuthority, errors.New("x509"))
	other := reason.Wrap(reason.Timeout, errors.New("slow"))
	require.NoError(t, judge(catalog.Pass, nil))
	require.ErrorContains(t, judge(catalog.Pass, refused), `expected pass, got a failure with reason "unknown-authority"`)
	fc := catalog.FailClosed(reason.UnknownAuthority, reason.HostnameMismatch)
	require.Equal(t, "fail-closed(unknown-authority|hostname-mismatch)", fc.String())
	require.NoError(t, judge(fc, refused))
	require.ErrorContains(t, judge(fc, nil), "but it succeeded")
	require.ErrorContains(t, judge(fc, other), `another reason, "timeout"`)
	require.ErrorContains(t, judge(fc, errors.New("untyped")), `another reason, "unknown"`)

	byProbe := fc.From(reason.OriginProbe)
	require.Equal(t, "fail-closed(unknown-authority|hostname-mismatch from probe)", byProbe.String())
	require.NoError(t, judge(byProbe, reason.WrapFrom(reason.UnknownAuthority, reason.OriginProbe, errors.New("x509"))))
	require.ErrorContains(t, judge(byProbe, reason.WrapFrom(reason.UnknownAuthority, reason.OriginPeer, errors.New("alert"))), `from another origin, "peer"`)
	require.ErrorContains(t, judge(byProbe, refused), `from another origin, "unnamed"`, "a refusal that names no origin fails an expectation that names one")
}
