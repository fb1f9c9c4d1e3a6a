// Package translate carries a request from one API protocol to another and
// its answer back, for a door whose model's upstream speaks only chat
// completions:
//
//   - Messages ⇄ chat: MessagesToChat (a request), MessagesStream and
//     MessageFromChat (the answer), and quotagate's errors in Anthropic's
//     shape (MessagesErrorBody, MessagesErrorEvent);
//   - Responses ⇄ chat: ResponsesToChat, ResponsesStream and
//     ResponseFromChat;
//   - Gemini ⇄ chat: GeminiToChat, GeminiStream and GeminiFromChat, and
//     quotagate's errors in Google's shape (GeminiErrorBody,
//     GeminiErrorEvent).
//
// It imports the wire formats (backend/openai, backend/responses,
// backend/anthropic, backend/gemini), which know nothing of each other, and ledger for
// quotagate's error codes. Nothing here does I/O.
package translate

import "github.com/quotagate/quotagate/backend/ledger"

// invalid is a request the translation cannot carry: quotagate's
// invalid_request, since the door answers it before any upstream call.
func invalid(format string, args ...any) error {
	return ledger.Errorf(ledger.CodeInvalidRequest, format, args...)
}
