package admin

import (
	"net/http"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// The admin API answers a code as the gateway does: ledger_unavailable is
// a 503 and duplicate_request a 409 (both were 500 here once), and a
// provider's failure is typed upstream_error (it was api_error).
func TestStatus(t *testing.T) {
	tests := []struct {
		code   string
		status int
		typ    string
	}{
		{ledger.CodeInvalidRequest, http.StatusBadRequest, "invalid_request_error"},
		{ledger.CodeInvalidAPIKey, http.StatusUnauthorized, "authentication_error"},
		{ledger.CodeInsufficientBudget, http.StatusPaymentRequired, "insufficient_quota"},
		{ledger.CodeForbidden, http.StatusForbidden, "permission_error"},
		{ledger.CodeRunNotFound, http.StatusNotFound, "not_found_error"},
		{codeNotFound, http.StatusNotFound, "not_found_error"},
		{ledger.CodeRunEnded, http.StatusConflict, "invalid_request_error"},
		{ledger.CodeDuplicateRequest, http.StatusConflict, "invalid_request_error"},
		{ledger.CodeRequestTooLarge, http.StatusRequestEntityTooLarge, "invalid_request_error"},
		{codeUnsupportedMediaType, http.StatusUnsupportedMediaType, "invalid_request_error"},
		{ledger.CodeQuotaGuard, http.StatusTooManyRequests, "rate_limit_error"},
		{ledger.CodeUpstreamError, http.StatusBadGateway, "upstream_error"},
		{ledger.CodeUpstreamInterrupt, http.StatusBadGateway, "upstream_error"},
		{ledger.CodeUpstreamTimeout, http.StatusGatewayTimeout, "upstream_error"},
		{ledger.CodeLedgerUnavailable, http.StatusServiceUnavailable, "server_error"},
		{ledger.CodeInternal, http.StatusInternalServerError, "server_error"},
	}
	for _, tt := range tests {
		if st, typ := status(tt.code); st != tt.status || typ != tt.typ {
			t.Errorf("status(%q) = %d %s, want %d %s", tt.code, st, typ, tt.status, tt.typ)
		}
	}
}
