package anthropic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/ledger"
)

// TestErrorBodies: every quotagate code has an Anthropic type, and the
// message carries the code so a person can act on it.
func TestErrorBodies(t *testing.T) {
	codes := []struct{ code, typ string }{
		{ledger.CodeInvalidRequest, "invalid_request_error"},
		{ledger.CodeInvalidAPIKey, "authentication_error"},
		{ledger.CodeInsufficientBudget, "billing_error"},
		{ledger.CodeForbidden, "permission_error"},
		{ledger.CodeModelNotFound, "not_found_error"},
		{ledger.CodeRunNotFound, "not_found_error"},
		{ledger.CodeRequestTooLarge, "request_too_large"},
		{ledger.CodeConcurrencyLimit, "rate_limit_error"},
		{ledger.CodeRateLimited, "rate_limit_error"},
		{ledger.CodeQuotaGuard, "rate_limit_error"},
		{ledger.CodeUpstreamBusy, "overloaded_error"},
		{ledger.CodeLedgerUnavailable, "overloaded_error"},
		{ledger.CodeUpstreamError, "api_error"},
		{ledger.CodeUpstreamTimeout, "timeout_error"},
		{ledger.CodeUpstreamInterrupt, "api_error"},
		{ledger.CodeRunEnded, "invalid_request_error"},
		{ledger.CodeInternal, "api_error"},
	}
	var all strings.Builder
	for _, c := range codes {
		err := error(ledger.Errorf(c.code, "a sentence about %s", c.code))
		if c.code == ledger.CodeInternal {
			err = errors.New("sqlite: disk I/O error at /secret/path")
		}
		b := anthropic.ErrorBody(err)
		var e struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if json.Unmarshal(b, &e) != nil || e.Type != "error" || e.Error.Type != c.typ {
			t.Errorf("%s: body %s, want type %s", c.code, b, c.typ)
		}
		if !strings.Contains(e.Error.Message, "(quotagate: "+c.code+")") {
			t.Errorf("%s: message %q does not name the code", c.code, e.Error.Message)
		}
		if strings.Contains(e.Error.Message, "secret") {
			t.Errorf("%s: internal detail leaked: %q", c.code, e.Error.Message)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	golden(t, "testdata/errors/bodies.golden.jsonl", []byte(all.String()))
	ev := string(anthropic.ErrorEventFor(ledger.Errorf(ledger.CodeUpstreamInterrupt, "the upstream cut the stream")))
	if !strings.HasPrefix(ev, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"") || !strings.HasSuffix(ev, "\n\n") {
		t.Errorf("error event %q", ev)
	}
}

func TestUpstreamErrorMessage(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{`{"error":{"message":"rate limited","code":"x"}}`, "rate limited"},
		{"upstream down\nmore", "upstream down"},
		{"", "(empty body)"},
	} {
		if got := anthropic.UpstreamErrorMessage([]byte(c.body)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.body, got, c.want)
		}
	}
}
