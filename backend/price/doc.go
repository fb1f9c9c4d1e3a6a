// Package price turns tokens into money, exactly: a price per 1M tokens for
// each model, the cost of a run, the embedded price table and its
// replacement.
//
// Money is integer micros (10⁻⁶) of the gateway's currency (Micros), read
// from and written to decimal strings with at most 6 places — never a
// float. The price table is in US dollars; usd_rate (Rate) converts a price
// exactly, into 10⁻¹² of the currency per 1M tokens (PerMillion), and a
// run's cost adds its four parts at that precision and rounds up to a whole
// micro once (Price.Cost):
//
//	uncached input × input + cache reads × cached_input
//	  + cache writes × cache_write + output (reasoning included) × output
//
// Each door reports usage its own way (cached tokens inside the prompt for
// chat and Responses, beside it for Anthropic Messages); ChatTokens,
// ResponsesTokens and MessagesTokens put every token in exactly one part.
//
// The package imports only the standard library: the ledger, the doors and
// the configuration use it, never the reverse.
package price
