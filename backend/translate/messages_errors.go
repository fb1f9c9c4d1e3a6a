package translate

import (
	"github.com/quotagate/quotagate/backend/anthropic"
	"github.com/quotagate/quotagate/backend/ledger"
)

// quotagate's refusals and failures at the Messages door, in Anthropic's
// shape with quotagate's code in the message (anthropic.ErrorMessage).

// MessagesErrorType is the Anthropic error type for one of quotagate's
// codes.
func MessagesErrorType(code string) string {
	switch code {
	case ledger.CodeInvalidRequest, ledger.CodeModelUnpriced, ledger.CodeRunEnded, ledger.CodeNotHeld, ledger.CodeConflict, ledger.CodeDuplicateRequest:
		return anthropic.ErrInvalidRequest
	case ledger.CodeInvalidAPIKey:
		return anthropic.ErrAuthentication
	case ledger.CodeInsufficientBudget:
		return anthropic.ErrBilling
	case ledger.CodeForbidden:
		return anthropic.ErrPermission
	case ledger.CodeModelNotFound, ledger.CodeRunNotFound:
		return anthropic.ErrNotFound
	case ledger.CodeRequestTooLarge:
		return anthropic.ErrRequestTooLarge
	case ledger.CodeConcurrencyLimit, ledger.CodeRateLimited, ledger.CodeQuotaGuard:
		return anthropic.ErrRateLimit
	case ledger.CodeUpstreamBusy, ledger.CodeLedgerUnavailable:
		return anthropic.ErrOverloaded
	case ledger.CodeUpstreamTimeout:
		return anthropic.ErrTimeout
	}
	return anthropic.ErrAPI // upstream_error, upstream_interrupted, internal
}

// MessagesErrorBody is the Anthropic-shaped body for err:
// {"type":"error","error":{"type":…,"message":"… (quotagate: code)"}}.
func MessagesErrorBody(err error) []byte {
	code := ledger.ErrorCode(err)
	return anthropic.ErrorBody(MessagesErrorType(code), anthropic.ErrorMessage(code, ledger.ErrorMessage(err)))
}

// MessagesErrorEvent is the in-stream error event for err (a cut stream:
// api_error with upstream_interrupted in the message).
func MessagesErrorEvent(err error) []byte {
	code := ledger.ErrorCode(err)
	return anthropic.ErrorEvent(MessagesErrorType(code), anthropic.ErrorMessage(code, ledger.ErrorMessage(err)))
}
