// Package wire is the kit the wire formats (backend/openai,
// backend/responses, backend/anthropic, backend/gemini) share, and nothing
// else of quotagate's: the standard library only, so that each format stays
// a leaf.
//
//   - Fields reads a JSON object member by member, values raw. Unlike
//     json.Unmarshal into a struct it sees duplicate and differently-cased
//     keys, which is how a body could say one thing to the gateway and
//     another to the upstream.
//   - ReadBody is the strict reading of a request body's top level every
//     door does the same way: valid UTF-8, one object, no member twice in
//     any letter case, no accounting field (ForbiddenFields), known members
//     in their own spelling, null as "not given".
//   - Require refuses a body without a member its format cannot do
//     without.
//   - Count is the JSON integer a cap or a usage figure must be.
//   - Problem: the first thing a response stream said that cannot be
//     accounted for, which a tally keeps.
//   - Compact, CompactArray: a raw value (a tool call's arguments, a tool
//     definition) without insignificant space, the form a meter counts.
//   - Valid, EachMember, EachElement, ScanObject, ScanArray, String: a
//     validator and a member scanner that read a large body in one pass
//     without copying its values, each held to encoding/json by a fuzz test.
//
// A refusal is a *RequestError: a sentence for the person who sent the
// body. The doors give it quotagate's code (invalid_request).
package wire
