package reason_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nvcf/conformance/wire/reason"
)

// Every real text, as a real component sends it (variable parts filled),
// with the reason and origin it means; and texts that must name nothing.
func TestRealGRPCStatus(t *testing.T) {
	for _, c := range []struct {
		code codes.Code
		msg  string
		want reason.Reason
		from reason.Origin
	}{
		{codes.InvalidArgument, "inference_server_id is empty", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "inference_server_url is empty", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "invalid inference_server_url: inference_server_url scheme must be http or https", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "invalid inference_server_url: inference_server_url must be a valid URL", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "invalid inference_server_url: inference_server_url must include port", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "reverse tunnel flag set but no reverse tunnel config", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "cluster_id changed", reason.InvalidRegistration, reason.OriginStargate},
		{codes.InvalidArgument, "inference_server_id changed", reason.InvalidRegistration, reason.OriginStargate},
		{codes.AlreadyExists, "inference_server_id 'worker-a/pylon-7' is already registered", reason.DuplicateRegistration, reason.OriginStargate},
		{codes.Unauthenticated, "authentication failed", reason.BadToken, reason.OriginStargate},
		{codes.Unavailable, "failed to connect to peer: transport error", reason.BackendUnreachable, reason.OriginStargate},
		{codes.InvalidArgument, "registration requires a target stargate authority", reason.InvalidAuthority, reason.OriginRouter},
		{codes.InvalidArgument, "registration authority stargate.region-a.nvcf.test does not match advertised stargate hostname template", reason.InvalidAuthority, reason.OriginRouter},
		{codes.Unavailable, "target stargate stargate-9 is not ready", reason.NotReady, reason.OriginRouter},
		{codes.Unavailable, "no ready stargate targets", reason.NotReady, reason.OriginRouter},
		{codes.Unavailable, "timed out connecting to stargate target", reason.BackendUnreachable, reason.OriginRouter},
		{codes.Unavailable, "failed to connect to stargate target: tcp connect error: Connection refused (os error 111)", reason.BackendUnreachable, reason.OriginRouter},
		{codes.Internal, "invalid stargate target address: invalid uri", reason.BackendUnreachable, reason.OriginRouter},

		// The code is part of the text: the same words under another code name nothing.
		{codes.Unavailable, "inference_server_id is empty", reason.None, ""},
		{codes.InvalidArgument, "authentication failed", reason.None, ""},
		{codes.Unauthenticated, "inference_server_id 'x' is already registered", reason.None, ""},
		// Whole texts only: no prefix, suffix, other case or empty variable part.
		{codes.InvalidArgument, "error: inference_server_id is empty", reason.None, ""},
		{codes.InvalidArgument, "inference_server_id is empty!", reason.None, ""},
		{codes.InvalidArgument, "Inference_server_id is empty", reason.None, ""},
		{codes.AlreadyExists, "inference_server_id '' is already registered", reason.None, ""},
		{codes.Unavailable, "target stargate  is not ready", reason.None, ""},
		{codes.Unavailable, "target stargate x is not ready\n", reason.None, ""},
		// Texts no real component sends.
		{codes.Unavailable, "cluster id mismatch", reason.None, ""},
		{codes.InvalidArgument, string(reason.InvalidAuthority), reason.None, ""},
		{codes.Unavailable, "connection error", reason.None, ""},
	} {
		t.Run(c.code.String()+"/"+c.msg, func(t *testing.T) {
			r, o, ok := reason.OfRealStatus(c.code, c.msg)
			require.Equal(t, c.want != reason.None, ok)
			require.Equal(t, c.want, r)
			require.Equal(t, c.from, o)
			// FromStatus reads them from a status error, through wrapping.
			r, o, ok = reason.FromStatus(fmt.Errorf("register: %w", status.Error(c.code, c.msg)))
			require.Equal(t, c.want != reason.None, ok)
			require.Equal(t, c.want, r)
			require.Equal(t, c.from, o)
		})
	}
}

// Our own ErrorInfo wins over a real text in the message.
func TestStatusDetailsWinOverRealText(t *testing.T) {
	err := reason.Status(codes.InvalidArgument, reason.SchemeRequired, reason.OriginPylon, "inference_server_id is empty")
	r, o, ok := reason.FromStatus(err)
	require.True(t, ok)
	require.Equal(t, reason.SchemeRequired, r)
	require.Equal(t, reason.OriginPylon, o)
}

func TestAckReason(t *testing.T) {
	for text, want := range map[string]reason.Reason{
		"empty inference_server_id":        reason.BadHandshake,
		"authentication failed":            reason.BadToken,
		"unauthorized inference_server_id": reason.Unregistered,
		"routing key mismatch":             reason.RegistrationMismatch,
		"duplicate connection":             reason.DuplicateTunnel,
		// The reference Stargate's typed reasons pass as they are.
		string(reason.Unregistered):       reason.Unregistered,
		string(reason.ClientCertRequired): reason.ClientCertRequired,
		// Anything else is unknown, even a text that looks like a reason.
		"cluster id mismatch":               reason.Unknown,
		"":                                  reason.Unknown,
		string(reason.Unknown):              reason.Unknown,
		"authentication failed: bad token":  reason.Unknown,
		"unauthorized inference_server_id ": reason.Unknown,
		"some-new-reason":                   reason.Unknown,
	} {
		require.Equal(t, want, reason.AckReason(text), "%q", text)
	}
}

func TestRealQUICClose(t *testing.T) {
	for text, want := range map[string]reason.Reason{
		"unknown target SNI":        reason.UnknownSNI,
		"missing target SNI":        reason.UnknownSNI,
		"target stargate not ready": reason.NotReady,
		"router shutdown":           reason.Unavailable,
		"client complete":           reason.None,
		"shutdown":                  reason.None,
		"":                          reason.None,
	} {
		r, o, ok := reason.OfRealClose(text)
		require.Equal(t, want, r, "%q", text)
		require.Equal(t, want != reason.None, ok)
		if ok {
			require.Equal(t, reason.OriginQUICRelay, o)
		}
	}
}

func TestRealHTTP(t *testing.T) {
	for _, c := range []struct {
		status int
		code   string
		want   reason.Reason
	}{
		{http.StatusNotFound, "no_eligible_candidates", reason.NoEligibleCandidates},
		{http.StatusServiceUnavailable, "input_work_limit_exceeded", reason.InputWorkLimitExceeded},
		{http.StatusBadRequest, "", reason.BadRequest},
		{http.StatusServiceUnavailable, "", reason.Unavailable},
		{http.StatusBadGateway, "", reason.BackendUnreachable},
		{http.StatusNotFound, "", reason.None},
		{http.StatusServiceUnavailable, "no_eligible_candidates", reason.None},
		{http.StatusNotFound, "some_new_code", reason.None},
		{http.StatusInternalServerError, "", reason.None},
	} {
		r, o, ok := reason.OfRealHTTP(c.status, c.code)
		require.Equal(t, c.want, r, "%d %q", c.status, c.code)
		require.Equal(t, c.want != reason.None, ok)
		if ok {
			require.Equal(t, reason.OriginStargate, o)
		}
	}
}

// A real Pylon's problem details name Pylon; the status is part of the
// text, and the texts are the reference Pylon's too.
func TestPylonProblem(t *testing.T) {
	for _, c := range []struct {
		status int
		detail string
		want   reason.Reason
	}{
		{http.StatusBadRequest, "missing required x-request-id header", reason.BadRequest},
		{http.StatusBadRequest, "invalid x-input-tokens header", reason.BadRequest},
		{http.StatusBadRequest, "request body must be valid JSON", reason.BadRequest},
		{http.StatusBadRequest, "/v1/chat/completions requests must set stream=true", reason.BadRequest},
		{http.StatusBadRequest, "/v1/responses requests must set stream=true", reason.BadRequest},
		{http.StatusServiceUnavailable, "request body must be valid JSON", reason.None},
		{http.StatusBadRequest, "/v1/embeddings requests must set stream=true", reason.None},
		{http.StatusBadRequest, "missing required  header", reason.None},
		{http.StatusBadRequest, "", reason.None},
	} {
		r, o, ok := reason.OfPylonProblem(c.status, c.detail)
		require.Equal(t, c.want, r, "%d %q", c.status, c.detail)
		require.Equal(t, c.want != reason.None, ok)
		if ok {
			require.Equal(t, reason.OriginPylon, o)
		}
	}
}

// An unmapped text is Unknown, with the text kept for the evidence.
func TestUnknownKeepsRawText(t *testing.T) {
	err := reason.UnknownText(reason.ChannelAck, "cluster id mismatch")
	require.Equal(t, reason.Unknown, reason.Of(err))
	require.Contains(t, err.Error(), `"cluster id mismatch"`)
	require.Equal(t, reason.Origin(""), reason.OriginOf(err))
	_, _, ok := reason.FromStatus(status.Error(codes.Unavailable, "cluster id mismatch"))
	require.False(t, ok, "a status no list names carries no reason; the caller reports it as unknown with its text")
}

// Every entry matches its own text (variable parts filled), and no entry
// shadows another: each sample finds its own entry first.
func TestEveryRealRefusalMatchesItself(t *testing.T) {
	for i, rr := range reason.RealRefusals {
		text := fill(rr.Text)
		var r reason.Reason
		var o reason.Origin
		var ok bool
		switch rr.Channel {
		case reason.ChannelGRPC:
			r, o, ok = reason.OfRealStatus(rr.Code, text)
		case reason.ChannelAck:
			r, ok = reason.OfRealAck(text)
			o = reason.OriginStargate
		case reason.ChannelQUICClose:
			r, o, ok = reason.OfRealClose(text)
		case reason.ChannelHTTP:
			r, o, ok = reason.OfRealHTTP(rr.HTTPStatus, text)
		case reason.ChannelPylonProblem:
			r, o, ok = reason.OfPylonProblem(rr.HTTPStatus, text)
		default:
			t.Fatalf("entry %d: channel %q", i, rr.Channel)
		}
		require.True(t, ok, "entry %d %q", i, rr.Text)
		require.Equal(t, rr.Reason, r, "entry %d %q", i, rr.Text)
		require.Equal(t, rr.Origin, o, "entry %d %q", i, rr.Text)
		require.True(t, reason.Known(rr.Reason), "entry %d: %q is no typed reason", i, rr.Reason)
		require.NotEmpty(t, rr.Source)
		require.True(t, strings.HasPrefix(rr.Source, "crates/"), rr.Source)
	}
}

func fill(text string) string {
	r := strings.NewReplacer("{id}", "is-1", "{pod}", "stargate-0", "{authority}", "sg.example", "{error}", "boom", "{header}", "x-model")
	return r.Replace(text)
}

// docs/reasons.md lists every real text with its source and reason.
func TestRealRefusalsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/reasons.md")
	require.NoError(t, err)
	for _, rr := range reason.RealRefusals {
		text := rr.Text
		if rr.Channel == reason.ChannelHTTP || rr.Channel == reason.ChannelPylonProblem {
			text = strconv.Itoa(rr.HTTPStatus) + " " + text
		}
		row := fmt.Sprintf("| `%s` | `%s` | `%s` | `%s` |", strings.TrimSpace(text), rr.Source, rr.Reason, rr.Origin)
		require.True(t, strings.Contains(string(doc), row), "docs/reasons.md lacks the row %s", row)
	}
}

// All lists every Reason constant of the package but None and Unknown.
func TestAllListsEveryReason(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "reason.go", nil, 0)
	require.NoError(t, err)
	var declared []reason.Reason
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i := range vs.Names {
			if i < len(vs.Values) {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					if s != "" && s != string(reason.Unknown) {
						declared = append(declared, reason.Reason(s))
					}
				}
			}
		}
		return true
	})
	require.ElementsMatch(t, declared, reason.All)
	require.False(t, reason.Known(reason.Unknown))
	require.False(t, reason.Known(reason.None))
	require.Equal(t, reason.Unknown, reason.Of(errors.New("x")))
}
