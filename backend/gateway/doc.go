// Package gateway serves quotagate's /v1 API: one protocol-free run core
// and a door per API protocol (door.go: the seam), POST
// /v1/chat/completions (streaming and not) being the first door, POST
// /v1/responses (responses.go) and POST /v1/messages with POST
// /v1/messages/count_tokens (messages.go: Anthropic's Messages API, Claude
// Code) and the Gemini API's POST /v1beta/models/{model}:generateContent,
// :streamGenerateContent and :countTokens (gemini.go, gemini_routes.go:
// Gemini CLI, the Google Gen AI SDKs) the others; and GET /v1/models, GET /v1/balance,
// GET /v1/runs/{id} and DELETE /v1/runs/{id}.
//
// # One call
//
//	auth (tenant key, Bearer, x-api-key or x-goog-api-key) → rate limit → read the whole body (413) →
//	door parse (400 for accounting fields) → model → quota guard →
//	meter.NewRun (the reserve) → gate → Admit (one atomic ledger step) →
//	X-Run-Id → [wait at the gate, Start] → upstream (native or
//	translated) → relay (the door reads each event; the meter run
//	observes) → verdict → settle or keep the hold
//
// The outcome is decided by the handler and written to the ledger in a
// defer, so an early return or a panic still ends the run, with its hold
// kept unless there is evidence:
//
//   - trusted usage (meter.Run.Verdict: complete, consistent, followed by
//     the protocol's terminal marker, chat's [DONE]) settles;
//   - an HTTP error answer before any output, a connection never made, or a
//     call that gave up while queued releases the hold, that answer being
//     the evidence;
//   - everything else keeps the hold with usage unknown: missing or false
//     usage, a stream cut by the upstream (interrupted), a cancel by the
//     owner, the operator or the client's disconnect (cancelled), a request
//     that reached the upstream but got no answer (failed).
//
// Before the first byte a failure is an HTTP error in the door's shape
// (errorHeaders: the code of DESIGN.md's table → status, Retry-After on
// 429s and on 503 ledger_unavailable; the chat door's writeError: the
// OpenAI body). After it, a failure can only end the stream:
// an SSE error event, and no [DONE] — a cut upstream is never disguised as
// a normal end.
//
// # Concurrency
//
// A stream has two goroutines: a reader that parses upstream SSE events
// (openai.SSEReader, read by the door's answer) into a bounded queue (Options.StreamQueueEvents) and
// tallies the evidence, and the handler that writes queued events to the
// client under a per-write deadline (Options.WriteTimeout). A full queue
// blocks the reader, so a slow client stops the upstream read
// (backpressure) instead of growing a buffer. Cancelling a run — DELETE by
// its owner, Gateway.Cancel by the operator, the client's disconnect, a
// write timeout, upstream silence (Options.UpstreamTimeout) — cancels the
// upstream request's context, which closes the upstream connection, and
// ends a write blocked on a client that does not read.
//
// # Seams
//
// RateLimiter (per tenant, before any reserve), Gate (per upstream, a
// bounded FIFO queue; queued runs hold their reserve), QuotaGuard (consulted
// before counting; its QuotaCheck goes into the same atomic Admit) and
// Upstream (*upstream.Client) are small interfaces declared here; a nil
// RateLimiter, Gate or QuotaGuard turns that control off. Options.Retry
// retries an upstream 429/503 answered before any output. What follows the
// gateway's ledger writes (the live hub, the quota guard's Observe) is the
// ledger's commit hook (ledger.Store.OnCommit), wired once by the server.
//
// # What is deliberately absent
//
// No httputil.ReverseProxy: the client's body is read fully before the
// upstream call (golang/go#40747). No upstream response header reaches the
// client. No timer releases a hold.
package gateway
