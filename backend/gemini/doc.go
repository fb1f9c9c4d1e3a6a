// Package gemini is the Gemini API wire format (generativelanguage
// v1beta), for the gateway's Gemini door. It is a leaf: the standard
// library and backend/wire (internal/depcheck's TestWireFormatsAreLeaves),
// no I/O.
//
//   - ParseRequest: a generateContent / streamGenerateContent /
//     countTokens body, with the model and whether it streams taken from
//     the URL — contents (user and model turns of text, inlineData,
//     fileData, functionCall and functionResponse parts), systemInstruction,
//     tools (functionDeclarations; other tools kept raw), toolConfig,
//     generationConfig (maxOutputTokens, temperature, topP, topK,
//     stopSequences, candidateCount, thinkingConfig, response formats),
//     safetySettings and cachedContent. Accounting fields, case twins and
//     snake_case twins of the members the gateway reads are refused.
//   - Request.Turns, Request.ToolsJSON: the input in the meter's shape —
//     what both the reserve and countTokens count, so they are equal.
//   - Response, Candidate, Content, Part: the shapes of an answer, which
//     backend/translate fills from a chat-completions answer; Chunk frames
//     one as an SSE event.
//   - Tally, ParseResponse: the evidence of a native answer.
//   - ErrorBody, ErrorEvent, ErrorMessage: refusals and stream failures in
//     Google's shape ({"error":{"code","message","status"}}).
//
// # Trusted usage
//
// A stream is a sequence of `data:` chunks, each a whole
// GenerateContentResponse, with no end marker of its own: the chunk whose
// candidate carries finishReason is the last, and its usageMetadata is the
// evidence. The provider's prompt is promptTokenCount +
// toolUsePromptTokenCount (cachedContentTokenCount is part of
// promptTokenCount, kept as the cached figure) and its output
// candidatesTokenCount + thoughtsTokenCount (the thoughts are the
// reasoning). Figures are cumulative: one that goes down between chunks,
// a final chunk without usageMetadata, data after the final chunk, or an
// error chunk is a problem, and a problem keeps the hold.
//
// # What counts as input
//
// Under utf8-bytes-v1: the UTF-8 bytes of the system instruction's text,
// of every turn's text parts and of each functionResponse's response
// (compact JSON) — what a translation sends as chat text. Under tiktoken
// also each turn's role and framing, the function declarations, earlier
// function calls and thought parts (as uncertain units: a provider counts
// them its own way). Each inline or file part costs the configured media
// units and is never fetched.
package gemini
