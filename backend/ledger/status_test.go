package ledger_test

import (
	"net/http"
	"testing"

	"github.com/quotagate/quotagate/backend/ledger"
)

// Every code a client can read has its status in the one table (DESIGN.md's
// error table for the ledger's own codes).
func TestHTTPStatus(t *testing.T) {
	for code, want := range map[string]int{
		ledger.CodeInvalidRequest:       http.StatusBadRequest,
		ledger.CodeModelUnpriced:        http.StatusBadRequest,
		ledger.CodeInvalidAPIKey:        http.StatusUnauthorized,
		ledger.CodeInsufficientBudget:   http.StatusPaymentRequired,
		ledger.CodeForbidden:            http.StatusForbidden,
		ledger.CodeModelNotFound:        http.StatusNotFound,
		ledger.CodeRunNotFound:          http.StatusNotFound,
		ledger.CodeNotFound:             http.StatusNotFound,
		ledger.CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
		ledger.CodeRequestTimeout:       http.StatusRequestTimeout,
		ledger.CodeRunEnded:             http.StatusConflict,
		ledger.CodeNotHeld:              http.StatusConflict,
		ledger.CodeConflict:             http.StatusConflict,
		ledger.CodeDuplicateRequest:     http.StatusConflict,
		ledger.CodeRequestTooLarge:      http.StatusRequestEntityTooLarge,
		ledger.CodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
		ledger.CodeConcurrencyLimit:     http.StatusTooManyRequests,
		ledger.CodeRateLimited:          http.StatusTooManyRequests,
		ledger.CodeUpstreamBusy:         http.StatusTooManyRequests,
		ledger.CodeQuotaGuard:           http.StatusTooManyRequests,
		ledger.CodeUpstreamError:        http.StatusBadGateway,
		ledger.CodeUpstreamInterrupt:    http.StatusBadGateway,
		ledger.CodeUpstreamTimeout:      http.StatusGatewayTimeout,
		ledger.CodeLedgerUnavailable:    http.StatusServiceUnavailable,
		ledger.CodeInternal:             http.StatusInternalServerError,
		"no_such_code":                  http.StatusInternalServerError,
	} {
		if got := ledger.HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%q) = %d, want %d", code, got, want)
		}
	}
}
