// Package responses is the OpenAI Responses API (POST /v1/responses) as a
// wire format: the request parser, the input text a reserve counts, the
// shapes of Responses events and objects, and the reader of a native
// Responses event stream. It is a leaf: the standard library and
// backend/wire (internal/depcheck's TestWireFormatsAreLeaves), no I/O;
// fuzzed and golden-tested. Translation to and from chat completions is
// backend/translate's.
//
// # Accounting
//
// The reserve counts instructions, every message's text parts and every
// *_call_output; under the tiktoken rule also the tool definitions and the
// earlier calls' names and arguments (billed as prompt by the provider, but
// counted differently by each, so they are uncertain), plus the per-message
// overhead. Under utf8-bytes-v1 only the UTF-8 bytes of instructions, message
// text parts and *_call_output count; tools, arguments and reasoning do not.
//
// Trusted usage comes only from the usage of a final response.completed (or
// response.incomplete), `input_tokens + output_tokens`; output_tokens already
// includes output_tokens_details.reasoning_tokens. response.failed, an error
// event, a cut or a final event without usage leave the hold in place. The
// reader only observes; the verdict belongs to the caller.
//
// # What is deliberately absent
//
// No response.completed is ever made up: a translated stream that the
// upstream cut ends with one `error` event whose code is
// upstream_interrupted. previous_response_id needs state only the provider
// keeps, so backend/translate refuses it (a native relay passes it through).
package responses
