// Package meter counts units and judges usage evidence, with no I/O beyond
// embedded files:
//
//   - meters: "utf8-bytes-v1" (1 unit per UTF-8 byte, seed 000) and
//     "tiktoken" (o200k_base / cl100k_base, BPE files embedded offline);
//   - the reserve taken at admission (ReservePolicy.Reserve, seeds 000,
//     002) of a Request, which a door fills from its own wire format;
//   - Run, the per-call meter created once at admission: reserve → observe
//     events → verdict;
//   - Judge: DESIGN.md's "Settlement rule per meter", which turns the
//     evidence (Observations) into settle or keep-the-hold. The overrun
//     above the reserve is ledger.SplitOverrun's.
//
// meter knows no wire protocol: the chat-completions format is
// backend/openai, and the gateway's doors translate between the two.
//
// # What counts as input and output
//
// Under utf8-bytes-v1 the input is the bytes of message contents only
// (string contents and text parts): no roles, names, tool definitions or
// per-message overhead, so every figure can be checked by hand ("hi" is 2).
// Under tiktoken the input follows OpenAI's cookbook: content tokens plus 3
// per message, the role's tokens, 1 + the name's tokens when a name is
// given, 3 to prime the reply, and the tokens of tool calls and tool
// definitions. Under both, each image (or other media) part is
// ReservePolicy.ImageUnits and is never downloaded.
//
// The output is every piece of generated text the gateway relays
// (Observation.Text: for chat, delta.content, delta.reasoning_content and
// tool-call names and arguments). Text that looks like usage JSON is text:
// only a usage member is evidence.
//
// # Trust
//
// Judge never settles on the gateway's own count alone: under
// utf8-bytes-v1 the upstream's usage must agree exactly with it, under
// tiktoken it must be complete, consistent and plausible — within a
// PromptBand of the gateway's counts, narrow for OpenAI models (counted
// with their own encoding) and wide for models with their own tokenizer
// (BandFor). Anything else keeps the hold (RELIABILITY I3).
//
// # The gateway's path
//
//	req, err := door.parse(body)                       // 400 on any error; req → meter.Request
//	run := meter.NewRun(m, policy, band, mreq, "")     // run.ReserveUnits() → ledger Admit
//	for each upstream event: run.Observe(door.observe(ev))
//	v := run.Verdict()
//	// v.Trusted → Settle(v.SpendUnits, v.Evidence()); else KeepHold(…, v.Evidence())
//
// # Cost
//
// The tiktoken meter counts with its own compact copy of each encoding's
// ranks, built from tiktoken-go-loader's embedded file when a model first
// needs it, and the two pre-tokenizers written out (bpe.go,
// pretokenize.go); tiktoken-go itself is the tests' reference, which every
// count is held to. Byte-pair merging is quadratic in the length of one
// pre-token piece, so the meter cuts long text where both encodings start
// a new piece anyway (and by force only inside a pathological run), and it
// remembers counts of long texts, which agents resend every turn. See
// docs/bench/meter.md and BENCHMARKS.md.
package meter
