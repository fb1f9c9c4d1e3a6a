// Package demo is quotagate's built-in demo upstream: a clearly labelled
// simulated OpenAI-compatible model ("demo-chat"), served on its own loopback
// listener so that the gateway reaches it over real sockets. It is both the
// embedded default of `make run` and the test double with scripted faults.
//
// # Plans
//
// Each request follows a Plan: the server's default (Options.Plan, SetPlan),
// or the request header X-Demo-Plan in URL-query form
// ("kind=cut&after=1&parts=part,more"), or an in-band directive as the last
// user message ("/demo kind=no-usage"), in that order of precedence: header,
// directive, default. Kinds: normal, cut, no-usage, false-usage, usage-text,
// slow, error, stall, error-mid (an in-stream error event after some output,
// echoing the key the request carried); every plan may add a latency range before the headers
// (seed 003 load: "latency=2s-5s"). "call=NAME&args=JSON" scripts a function
// call instead of text (acknowledged in text once the conversation ends with
// the function's output).
//
// # Protocols
//
// POST /v1/chat/completions, POST /v1/responses (the OpenAI Responses
// API, streamed in OpenAI's event order) and POST /v1/messages (the
// Anthropic Messages API, messages.go: text blocks, a scripted call as a
// tool_use block, usage with cache fields) with the same plans, as are POST
// /v1/completions (completions.go: a fill-in-the-middle that names the
// suffix's first line, cut to max_tokens) and POST /v1/embeddings
// (deterministic unit vectors, floats or base64), and POST
// /v1/models/{model}:generateContent and :streamGenerateContent?alt=sse
// (gemini.go: the Gemini API, text parts, a scripted call as a
// functionCall part, usageMetadata on the chunk with finishReason). Keys
// are accepted as "Authorization: Bearer", "x-api-key" or
// "x-goog-api-key".
//
// # Usage
//
// Streams honour stream_options.include_usage exactly as OpenAI does: every
// chunk carries "usage": null, then a final chunk with empty choices and the
// usage, then "data: [DONE]". By default usage counts UTF-8 bytes of the
// message contents and of the output text, so that utf8-bytes-v1 figures
// settle (seed 000: "问题" in, "你好 AI" out → 6 + 9 = 15).
//
// # Observation
//
// The server records every request (headers, body, plan), how far it got
// writing (parts, bytes, writes that blocked on a reader that does not read)
// and every disconnect it observed. Tests wait on these with Wait,
// WaitRequests and WaitDisconnects, never with sleeps.
package demo
