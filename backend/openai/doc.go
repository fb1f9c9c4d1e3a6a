// Package openai is the OpenAI chat-completions wire format, and nothing
// else: no counting, no verdict, no I/O beyond the readers it is handed.
//
//   - the request body: ParseChatRequest refuses accounting fields and
//     ambiguous spellings; ChatRequest.UpstreamBody always asks a streaming
//     upstream for usage;
//   - SSE framing (SSEReader), which hands back each event's exact bytes
//     (the same framing carries the Responses and Messages streams);
//   - chunk, completion and usage parsing (ParseChunk, ParseCompletion,
//     ParseUsage); Usage has the ledger's fields, so a door converts it;
//   - the answer as it travels (ChunkJSON, CompletionJSON), declared once
//     for the translations and the demo upstream;
//   - the error body (ErrorBody), declared once for every surface that
//     speaks it.
//
// Text that looks like usage JSON is text: only the usage member of a chunk
// object is evidence. Metering (units, reserve, verdict) is backend/meter;
// wire packages are leaves: the standard library and backend/wire
// (internal/depcheck's TestWireFormatsAreLeaves lists what each may use).
package openai
