// Package anthropic is the Anthropic Messages API wire format, for the
// gateway's Messages door. It is a leaf: the standard library and
// backend/wire (internal/depcheck's TestWireFormatsAreLeaves), no I/O.
//
//   - ParseRequest / ParseCountTokens: a POST /v1/messages (or
//     /v1/messages/count_tokens) body — system as a string or text blocks,
//     role "system" turns (Claude Code sends one), text, image, tool_use,
//     tool_result and thinking blocks, tools with unknown keys kept,
//     tool_choice, thinking, metadata (allowed at this door), output_config,
//     context_management, stop_sequences, temperature, top_p, top_k.
//     Accounting fields and case twins are refused as in the chat door.
//   - Request.Turns, Request.ToolsJSON: the input in the meter's shape — what
//     both the reserve and count_tokens count, so they are equal.
//   - AnswerMessage, Event, StopEvent: the shapes of an answer, which
//     backend/translate fills from a chat-completions answer.
//   - Tally, ParseMessage: the evidence of a native answer.
//   - ErrorBody, ErrorEvent, ErrorMessage: refusals and stream failures in
//     Anthropic's shape (backend/translate says which type each of
//     quotagate's codes is, and puts the code in the message).
//
// # Trusted usage
//
// Anthropic's input_tokens leaves cached tokens out; OpenAI's prompt_tokens
// includes them. The provider's prompt is therefore message_start's
// input_tokens + cache_creation_input_tokens + cache_read_input_tokens
// (Usage.PromptTokens), and the output is the last message_delta's
// output_tokens — cumulative, so deltas are never added, and
// message_start's output_tokens (a placeholder) is never counted. A
// translation maps prompt_tokens − cached_tokens to input_tokens and
// cached_tokens to cache_read_input_tokens, so nothing is counted twice or
// lost. Input figures a message_delta repeats may raise message_start's
// (they are cumulative), never lower them. message_stop is the end marker;
// a missing or contradictory figure keeps the hold.
//
// # What counts as input
//
// Under utf8-bytes-v1: the UTF-8 bytes of system text, of every message's
// text blocks and of tool_result text; tools and thinking are not counted.
// Under tiktoken also each turn's role and framing, tool definitions,
// earlier tool calls and thinking (as uncertain units: a provider counts
// them its own way). Each image or unknown block costs the configured
// media units and is never fetched.
package anthropic
