package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
	"github.com/quotagate/quotagate/backend/upstream"
)

// namedUpstream is an Upstream that is only a name.
type namedUpstream string

func (u namedUpstream) Name() string     { return string(u) }
func (namedUpstream) Serves(string) bool { return true }
func (namedUpstream) Models() []string   { return nil }
func (namedUpstream) Send(context.Context, []byte, http.Header) (*upstream.Response, error) {
	return nil, errors.New("not sent")
}

// A send that got no response: released only with proof that nothing left
// (a SendError with Sent false); a cancel names its cause to the client.
func TestAttemptFailed(t *testing.T) {
	a := attempt{up: namedUpstream("up")}
	for _, tc := range []struct {
		name       string
		err, cause error
		release    bool
		status     ledger.RunStatus
		evidence   string
		code       string
		keepsHold  bool
	}{
		{"NeverLeft", &upstream.SendError{Upstream: "up", Err: errors.New("refused")}, nil,
			true, ledger.RunFailed, "upstream_connect_error: up: refused", ledger.CodeUpstreamError, false},
		{"NeverLeftTimeout", &upstream.SendError{Upstream: "up", Timeout: true, Err: errors.New("dial")}, nil,
			true, ledger.RunFailed, "upstream_connect_error", ledger.CodeUpstreamTimeout, false},
		{"SentNoAnswer", &upstream.SendError{Upstream: "up", Sent: true, Err: errors.New("reset")}, nil,
			false, ledger.RunFailed, "upstream_no_response: the request reached up", ledger.CodeUpstreamError, true},
		{"PlainError", errors.New("boom"), nil,
			false, ledger.RunFailed, "upstream_no_response", ledger.CodeUpstreamError, true},
		{"OwnerCancelWhileWaiting", &upstream.SendError{Upstream: "up", Sent: true, Err: context.Canceled}, errCancelOwner,
			false, ledger.RunCancelled, "cancelled by its owner while waiting for the upstream's answer", ledger.CodeRunEnded, true},
		{"IdleWhileWaiting", errors.New("eof"), errUpstreamIdle,
			false, ledger.RunInterrupted, "while waiting", ledger.CodeUpstreamTimeout, true},
		{"CancelBeforeSent", &upstream.SendError{Upstream: "up", Err: context.Canceled}, errCancelOwner,
			true, ledger.RunCancelled, "upstream_not_sent", ledger.CodeRunEnded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, tell := a.failed(tc.err, tc.cause)
			if o.release != tc.release || o.status != tc.status || !strings.Contains(o.evidence, tc.evidence) {
				t.Errorf("outcome %+v, want release %v status %s evidence containing %q", o, tc.release, tc.status, tc.evidence)
			}
			if o.keepsHold() != tc.keepsHold {
				t.Errorf("keepsHold %v, want %v", o.keepsHold(), tc.keepsHold)
			}
			if code := ledger.ErrorCode(tell); code != tc.code {
				t.Errorf("client told %q (%v), want %s", code, tell, tc.code)
			}
		})
	}
}
